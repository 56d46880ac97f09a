package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leasegen/leasegen/internal/dbtest"
)

// The benchmark runs every figure group end to end, worker and enqueue
// processes included, and prints each figure and the target verdicts. The
// figures of such a small run mean nothing; only their presence is checked.
func TestBenchmarkPrintsEveryFigure(t *testing.T) {
	if testing.Short() {
		t.Skip("benchmark smoke run skipped in -short mode")
	}
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "leasegen-bench")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	small := []string{"-runs", "1", "-burn", "2000", "-procs", "2", "-slots", "100", "-latency", "1s", "-warmup", "200ms", "-idle", "1s", "-held", "5s", "-workflows", "20"}
	engines := map[string][]string{
		"sqlite": {"-sqlite"},
		"mysql":  {"-mysql", "", "-db-prefix", "leasegen_test_bench_"},
	}
	for name, args := range engines {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want := []string{"enqueue, one at a time", "enqueue, batches of 1,000", "burn-down, 1 worker process",
				"burn-down, 2 worker processes", ceilingName, flipsCeilingName, protocolName, naiveName, latencyName(true, "p99"), latencyName(false, "p99"),
				"first task after 1s idle, other process", "recovery after kill -9", recoveryBoundName,
				"worker RSS", "targets:", "burn-down >= 10x the naive baseline",
				"20 workflows of 5 steps (diamond and tail), 1 worker, default Config: time a step takes over a plain task's",
				"workflows of 5 steps run one at a time: a step's start after its last parent returned, p99"}
			if name == "mysql" {
				args[1] = dbtest.ServerDSN(t)
				want = append(want, statementsName, idleStatementsName, heartbeatName,
					ceilingCPUName, serverCPUName("burn-down, 1 worker process"), "server CPU per task <= 1.5x the ceiling's",
					"held snapshot, 5s at 400 tasks/s: pickup p99, last window", "claim scan probe, last window",
					"held snapshot: pickup p99 in the last window <= 2x the first")
			}
			out, err := exec.Command(bin, append(args, small...)...).CombinedOutput()
			if err != nil {
				t.Fatalf("leasegen-bench %s: %v\n%s", strings.Join(args, " "), err, out)
			}
			for _, w := range want {
				if !strings.Contains(string(out), w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}
