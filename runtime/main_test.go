package runtime

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails on any goroutine still running after the tests: every
// worker loop must be joined by Stop.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
