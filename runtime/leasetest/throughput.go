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

// CountTasksNow stores a count of every task by type and status, as
// workers do about every minute, for the pages that cannot count a large
// table live (Client.BoundedStats, the UI's overview and types pages): a
// test of a dashboard should not wait for a worker's turn.
func CountTasksNow(t testing.TB, d driver.Driver) {
	t.Helper()
	if err := bookkeeping.CountNow(context.Background(), d.Tables()); err != nil {
		t.Fatalf("leasetest: count the tasks: %v", err)
	}
}
