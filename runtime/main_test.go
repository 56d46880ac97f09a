package runtime

import (
	"os"
	"testing"
)

// TestMain lets the test binary double as a worker process for the kill -9
// test: with envChaosWorker set it runs chaosWorkerMain instead of tests.
func TestMain(m *testing.M) {
	if os.Getenv(envChaosWorker) != "" {
		os.Exit(chaosWorkerMain())
	}
	os.Exit(m.Run())
}
