package runtime

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain lets the test binary double as a worker process for the kill -9
// test: with envChaosWorker set it runs chaosWorkerMain instead of tests.
// After the tests it fails on any goroutine still running: every worker
// loop must be joined by Stop.
func TestMain(m *testing.M) {
	if os.Getenv(envChaosWorker) != "" {
		os.Exit(chaosWorkerMain())
	}
	goleak.VerifyTestMain(m)
}
