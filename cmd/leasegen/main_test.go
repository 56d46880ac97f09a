package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// build compiles the leasegen command into a temporary directory.
func build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "leasegen")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// run runs the command in dir and returns its exit code and output.
func run(t *testing.T, bin, dir string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if exit, ok := err.(*exec.ExitError); ok {
		return exit.ExitCode(), out.String(), errOut.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, out.String(), errOut.String()
}

func TestCommand(t *testing.T) {
	t.Parallel()
	bin := build(t)
	example, err := filepath.Abs("../../testdata/example/billing")
	if err != nil {
		t.Fatal(err)
	}

	t.Run("fresh package: silent, exit 0, file not rewritten", func(t *testing.T) {
		file := filepath.Join(example, "leasegen_gen.go")
		before, err := os.Stat(file)
		if err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := run(t, bin, example)
		after, _ := os.Stat(file)
		if code != 0 || stdout != "" || stderr != "" {
			t.Errorf("exit %d, stdout %q, stderr %q; want a silent success", code, stdout, stderr)
		}
		if !after.ModTime().Equal(before.ModTime()) {
			t.Error("an unchanged file was rewritten")
		}
		if code, _, stderr := run(t, bin, example, "-check", "-schema", "schema.sql"); code != 0 {
			t.Errorf("-check on committed output: exit %d: %s", code, stderr)
		}
	})

	t.Run("bad usage: exit 2", func(t *testing.T) {
		code, _, stderr := run(t, bin, example, "-nope")
		if code != 2 || !strings.Contains(stderr, "usage: leasegen") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
		code, _, stderr = run(t, bin, example, "-schema", "x.sql", "-schema-engine", "pg")
		if code != 2 || !strings.Contains(stderr, `-schema-engine "pg": use mysql, postgres or sqlite`) {
			t.Errorf("bad engine: exit %d, stderr %q", code, stderr)
		}
	})

	t.Run("bad input: exit 1 with positions", func(t *testing.T) {
		dir, _ := filepath.Abs("../../testdata/golden/unknown_option")
		code, stdout, stderr := run(t, bin, dir)
		want := `input.go:5:17: unknown option "max_attempt"; did you mean "max_attempts"?` // relative to the directory it ran in
		if code != 1 || stdout != "" || !strings.HasPrefix(stderr, want) || !strings.Contains(stderr, "leasegen: 2 error(s)") {
			t.Errorf("exit %d, stderr:\n%s\nwant it to contain %s", code, stderr, want)
		}
	})

	t.Run("stale output with type errors is regenerated; -check reports staleness", func(t *testing.T) {
		dir := t.TempDir()
		write := func(name, content string) {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write("go.mod", "module example.com/svc\n\ngo 1.26\n")
		write("task.go", "package svc\n\n// PingPayload pings.\n//\n//leasegen:task\ntype PingPayload struct{ Host string }\n\nvar _ Handlers = nil\n")
		write("leasegen_gen.go", "//go:build !leasegen_generating\n\npackage svc\n\nvar broken int = \"no longer compiles\"\n")
		if code, _, stderr := run(t, bin, dir); code != 0 {
			t.Fatalf("regenerating over a broken file: exit %d: %s", code, stderr)
		}
		got, _ := os.ReadFile(filepath.Join(dir, "leasegen_gen.go"))
		if !strings.Contains(string(got), "type Handlers interface") {
			t.Fatalf("regenerated file:\n%s", got)
		}
		write("task.go", "package svc\n\n// PingPayload pings.\n//\n//leasegen:task priority=3\ntype PingPayload struct{ Host string }\n")
		code, _, stderr := run(t, bin, dir, "-check")
		if code != 1 || !strings.Contains(stderr, "leasegen_gen.go is stale") || !strings.Contains(stderr, "--- a/leasegen_gen.go\n+++ b/leasegen_gen.go\n@@ -") ||
			!regexp.MustCompile(`(?m)^\+.*WithPriority\(3\)`).MatchString(stderr) {
			t.Errorf("-check after a change: exit %d, stderr:\n%s", code, stderr)
		}
		if after, _ := os.ReadFile(filepath.Join(dir, "leasegen_gen.go")); !bytes.Equal(after, got) {
			t.Error("-check wrote the file")
		}
	})

	t.Run("deterministic output", func(t *testing.T) {
		dir := t.TempDir()
		src, _ := os.ReadFile(filepath.Join(example, "leasegen_gen.go"))
		for range 3 {
			if code, _, stderr := run(t, bin, example, "-output", filepath.Join(dir, "again.go")); code != 0 {
				t.Fatal(stderr)
			}
			again, _ := os.ReadFile(filepath.Join(dir, "again.go"))
			if !bytes.Equal(again, src) {
				t.Fatal("a second run produced different output")
			}
		}
	})
}
