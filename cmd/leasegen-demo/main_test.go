package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leasegen/leasegen/internal/dbtest/pgtest"
)

// A small demo run on SQLite passes its own checks: every task finished,
// the killed worker's tasks were recovered, no effect happened twice. (How
// soon they ran again is reported, not checked: the conformance suite
// checks the recovery bound.)
func TestDemoPassesItsChecks(t *testing.T) { runDemoBinary(t) }

// The same on PostgreSQL, through -dsn postgres://...
func TestDemoOnPostgres(t *testing.T) { runDemoBinary(t, "-dsn", pgtest.New(t)) }

func runDemoBinary(t *testing.T, args ...string) {
	if testing.Short() {
		t.Skip("demo run skipped in -short mode")
	}
	t.Parallel()
	bin := buildDemo(t)
	out, err := exec.Command(bin, append([]string{"-tasks", "600", "-work", "60ms"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("demo failed: %v\n%s", err, out)
	}
	for _, want := range []string{"600 of 600 tasks succeeded", "kill -9 worker-2", "0 duplicated", "12 of 12 Settle workflows succeeded", "periodic:   reconcile (every 2s) enqueued", "every tick ran once"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
}

// With -ui the demo serves the web UI while it runs and keeps it open after
// the summary until interrupted.
func TestDemoServesTheUI(t *testing.T) {
	if testing.Short() {
		t.Skip("demo run skipped in -short mode")
	}
	t.Parallel()
	bin := buildDemo(t)
	cmd := exec.Command(bin, "-tasks", "300", "-work", "30ms", "-ui", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var base string
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		line := lines.Text()
		if u, ok := strings.CutPrefix(line, "ui:         "); ok && base == "" {
			base, _, _ = strings.Cut(u, " ")
		}
		if strings.Contains(line, "Ctrl-C ends the demo") {
			break
		}
	}
	if base == "" {
		t.Fatal("the demo printed no UI address")
	}
	resp, err := http.Get(base + "tasks?status=success")
	if err != nil {
		t.Fatalf("the UI after the summary: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `data-status="SUCCESS"`) {
		t.Errorf("GET %stasks: %d\n%s", base, resp.StatusCode, body)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("the demo after Ctrl-C: %v", err)
	}
}

// buildDemo builds the demo's binary into t's temporary folder.
func buildDemo(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "leasegen-demo")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
