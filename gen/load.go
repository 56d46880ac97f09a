package gen

import (
	"fmt"
	"go/token"
	"strconv"
	"strings"

	"golang.org/x/tools/go/packages"
)

// generatingTag excludes leasegen's own output while loading, so a stale
// generated file that no longer compiles cannot stop regeneration.
const generatingTag = "leasegen_generating"

// load type-checks the packages matched by patterns, relative to dir.
// Syntax and listing errors are returned; type errors are not, since code
// that uses the generated API does not type-check while it is excluded.
func load(dir string, patterns []string) ([]*packages.Package, error) {
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax |
			packages.NeedTypes | packages.NeedTypesInfo,
		Dir:        dir,
		BuildFlags: []string{"-tags=" + generatingTag},
	}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", strings.Join(patterns, " "), err)
	}
	var errs errorCollector
	for _, p := range pkgs {
		for _, e := range p.Errors {
			if e.Kind == packages.TypeError || compilerOutput(e) {
				continue
			}
			errs.add(parsePos(e.Pos), "", "%s", e.Msg)
		}
	}
	if err := errs.err(); err != nil {
		return nil, err
	}
	return pkgs, nil
}

// compilerOutput reports a listing error that only repeats the compiler's
// type errors ("# pkg\n./file.go:1:2: undefined: X"), which go list emits
// while it builds export data.
func compilerOutput(e packages.Error) bool {
	return e.Kind == packages.ListError && strings.HasPrefix(e.Msg, "# ")
}

// parsePos reads "file:line:col" as packages reports positions.
func parsePos(s string) token.Position {
	parts := strings.Split(s, ":")
	var p token.Position
	if len(parts) >= 3 {
		p.Filename = relativePath(strings.Join(parts[:len(parts)-2], ":"))
		p.Line, _ = strconv.Atoi(parts[len(parts)-2])
		p.Column, _ = strconv.Atoi(parts[len(parts)-1])
	} else {
		p.Filename = s
	}
	return p
}
