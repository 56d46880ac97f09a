package gen

import (
	"bytes"
	stdcmp "cmp"
	"errors"
	"fmt"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// DefaultOutput is the generated file's name in each package.
const DefaultOutput = "leasegen_gen.go"

// Config is one run of the generator.
type Config struct {
	Dir       string   // where patterns are resolved; "" means the current directory
	Patterns  []string // packages; none means "."
	Output    string   // file name inside each package (or an absolute path); "" means DefaultOutput
	Schema    string   // when set, also render the schema SQL to this path (relative to Dir)
	Engine    string   // the schema's engine: mysql (default), postgres or sqlite
	Alerts    string   // when set, also render Prometheus alert rules to this path
	Dashboard string   // when set, also render a Grafana dashboard to this path
	// TestHelpers also renders each package's typed test helpers, into
	// the package NAMEtest in the folder of that name inside the package's.
	TestHelpers bool
	Check       bool // compare instead of writing; ErrStale when different
	Stderr      io.Writer
}

// ErrStale reports, in check mode, a generated file that differs from what
// the generator would write.
var ErrStale = errors.New("generated code is stale: run go generate")

// File is one output of the generator.
type File struct {
	Path    string
	Content []byte
}

// Generate loads, models, validates and emits every package without
// touching the disk. Input problems come back as an ErrorList.
func Generate(cfg Config) ([]File, error) {
	if len(cfg.Patterns) == 0 {
		cfg.Patterns = []string{"."}
	}
	if cfg.Output == "" {
		cfg.Output = DefaultOutput
	}
	pkgs, err := load(cfg.Dir, cfg.Patterns)
	if err != nil {
		return nil, err
	}
	var errs, warns errorCollector
	var models []*Package
	for _, p := range pkgs {
		m := buildPackage(p, &errs, &warns)
		if len(m.Tasks) == 0 && len(m.Workflows) == 0 && len(errs.list) == 0 {
			errs.add(packagePos(p.GoFiles), "annotate a payload struct with //leasegen:task", "no //leasegen:task types in package %s", p.PkgPath)
		}
		models = append(models, m)
	}
	if list, ok := warns.err().(ErrorList); ok && cfg.Stderr != nil {
		for _, w := range list {
			fmt.Fprintf(cfg.Stderr, "%s: warning: %s; %s\n", w.Pos, w.Msg, w.Hint)
		}
	}
	if err := errs.err(); err != nil {
		return nil, err
	}
	var files []File
	for _, m := range models {
		src, err := emit(m)
		if err != nil {
			return nil, err
		}
		path := cfg.Output
		if !filepath.IsAbs(path) {
			path = filepath.Join(m.Dir, path)
		}
		files = append(files, File{Path: path, Content: src})
		if cfg.TestHelpers {
			helpers, err := emitTestHelpers(m)
			if err != nil {
				return nil, err
			}
			files = append(files, File{Path: filepath.Join(m.Dir, testHelpersPackage(m), DefaultOutput), Content: helpers})
		}
	}
	extras := []struct {
		path   string
		render func(*Package) ([]byte, error)
	}{
		{cfg.Schema, func(p *Package) ([]byte, error) { return renderSchema(p, stdcmp.Or(cfg.Engine, "mysql")) }},
		{cfg.Alerts, renderAlerts},
		{cfg.Dashboard, renderDashboard},
	}
	for _, x := range extras {
		if x.path == "" {
			continue
		}
		if len(models) != 1 {
			return nil, fmt.Errorf("-schema, -alerts and -dashboard need exactly one package, got %d", len(models))
		}
		content, err := x.render(models[0])
		if err != nil {
			return nil, err
		}
		path := x.path
		if !filepath.IsAbs(path) {
			path = filepath.Join(cfg.Dir, path)
		}
		files = append(files, File{Path: path, Content: content})
	}
	return files, nil
}

// Run generates and writes each file that changed; in check mode it writes
// nothing, prints a diff per stale file and returns ErrStale.
func Run(cfg Config) error {
	files, err := Generate(cfg)
	if err != nil {
		return err
	}
	stale := false
	for _, f := range files {
		changed, err := syncFile(f.Path, f.Content, cfg)
		if err != nil {
			return err
		}
		stale = stale || changed
	}
	if cfg.Check && stale {
		return ErrStale
	}
	return nil
}

// syncFile writes want to path unless the file already holds it; in check mode
// it prints a diff instead. It reports whether the file was (or would be)
// changed.
func syncFile(path string, want []byte, cfg Config) (bool, error) {
	have, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	if bytes.Equal(have, want) {
		return false, nil
	}
	if cfg.Check {
		if cfg.Stderr != nil {
			fmt.Fprintf(cfg.Stderr, "%s is stale: run go generate (a: committed, b: generated)\n%s", relativePath(path),
				unifiedDiff(filepath.ToSlash(relativePath(path)), lines(have), lines(want)))
		}
		return true, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, err
	}
	return true, os.WriteFile(path, want, 0o644)
}

// lines splits a file into its lines, without the final newline's empty
// line.
func lines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// workingDir is read once: every position of a run is made relative to it.
var workingDir = sync.OnceValues(os.Getwd)

// relativePath is path relative to the working directory, when it is an
// absolute path below or beside it.
func relativePath(path string) string {
	wd, err := workingDir()
	if err != nil || !filepath.IsAbs(path) {
		return path
	}
	if rel, err := filepath.Rel(wd, path); err == nil {
		return rel
	}
	return path
}

func packagePos(files []string) (p token.Position) {
	if len(files) > 0 {
		p.Filename = relativePath(files[0])
	}
	return p
}
