package gen

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/imports"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/golden")

// goldenDir holds one package per case: input.go, and either the expected
// leasegen_gen.go (compiled by `make lint`, since the case dirs are
// packages) or want.stderr for inputs the generator rejects. Negative cases
// are named for what they reject.
const goldenDir = "../testdata/golden"

func TestGolden(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(goldenDir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 15 {
		t.Fatalf("%d golden cases, want at least 15", len(dirs))
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			genPath, errPath := filepath.Join(dir, DefaultOutput), filepath.Join(dir, "want.stderr")
			var warnings bytes.Buffer
			files, err := Generate(Config{Dir: dir, Stderr: &warnings})
			// Positions print relative to the working directory (gen/ here).
			checkWarnings(t, filepath.Join(dir, "want.warnings"), strings.ReplaceAll(warnings.String(), dir+string(filepath.Separator), ""))
			var list ErrorList
			switch {
			case errors.As(err, &list):
				checkGolden(t, errPath, []byte(strings.ReplaceAll(list.Error(), dir+string(filepath.Separator), "")+"\n"), genPath)
			case err != nil:
				t.Fatal(err)
			default:
				checkGolden(t, genPath, files[0].Content, errPath)
				if grouped, err := imports.Process(genPath, files[0].Content, &imports.Options{Comments: true, FormatOnly: true}); err != nil || !bytes.Equal(grouped, files[0].Content) {
					t.Errorf("generated code is not as goimports formats it (err %v):\n%s", err, grouped)
				}
			}
		})
	}
}

// checkWarnings compares the warnings of a case with want.warnings, which
// exists only for a case that warns.
func checkWarnings(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if got == "" {
			_ = os.Remove(path)
			return
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("warnings, %s (-want +got):\n%s", path, diff)
	}
}

// checkGolden compares got with the file at path (rewriting it with
// -update) and makes sure the other outcome's file is absent.
func checkGolden(t *testing.T, path string, got []byte, otherPath string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		_ = os.Remove(otherPath)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./gen -run TestGolden -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
	if _, err := os.Stat(otherPath); err == nil {
		t.Errorf("%s exists, but the case produced %s", otherPath, filepath.Base(path))
	}
}
