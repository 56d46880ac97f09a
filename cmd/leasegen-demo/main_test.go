package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leasegen/leasegen/internal/dbtest/pgtest"
)

// A small demo run on SQLite passes its own checks: every task finished,
// the killed worker's tasks were recovered within the bound, no effect
// happened twice.
func TestDemoPassesItsChecks(t *testing.T) { runDemoBinary(t) }

// The same on PostgreSQL, through -dsn postgres://...
func TestDemoOnPostgres(t *testing.T) { runDemoBinary(t, "-dsn", pgtest.New(t)) }

func runDemoBinary(t *testing.T, args ...string) {
	if testing.Short() {
		t.Skip("demo run skipped in -short mode")
	}
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "leasegen-demo")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, append([]string{"-tasks", "600", "-work", "60ms"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("demo failed: %v\n%s", err, out)
	}
	for _, want := range []string{"600 of 600 tasks succeeded", "kill -9 worker-2", "0 duplicated", "periodic:   reconcile (every 2s) enqueued", "every tick ran once"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
}
