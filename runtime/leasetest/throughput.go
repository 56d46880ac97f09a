package leasetest

import (
	"context"
	"testing"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/internal/bookkeeping"
)

// CountThroughputNow counts the tasks finished so far on d's database
// into the tasks-finished-per-minute that Client.Throughput and the UI's
// chart show, the minute in progress included: workers count a minute
// only after it ended, which a test of a dashboard should not wait for.
// A minute is counted once, so tasks that finish later in the same minute
// are not counted.
func CountThroughputNow(t testing.TB, d driver.Driver) {
	t.Helper()
	if _, err := bookkeeping.RollupThroughput(context.Background(), d.Tables(), -time.Minute, 24*time.Hour); err != nil {
		t.Fatalf("leasetest: count the finished tasks: %v", err)
	}
}
