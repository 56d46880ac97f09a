package drivertest

import (
	"context"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime"
)

// Version3Rows is the INSERT that puts three tasks into a task table at
// schema version 3, given the engine's expressions for now, an hour ago
// and a second ago: 1 finished an hour ago; 2 queued at priority 7; 3
// running on a lease that expired a second ago. CheckUpgradeFromVersion3
// checks them after the upgrade.
func Version3Rows(now, hourAgo, secondAgo string) string {
	return `INSERT INTO leasegen_tasks (task_type, status, payload, priority, available_at, max_attempts, created_at, updated_at,
		lease_owner, lease_until, started_at, finished_at, attempt) VALUES
		('a', 'SUCCESS', '', 0, ` + hourAgo + `, 1, ` + hourAgo + `, ` + hourAgo + `, 'old', ` + hourAgo + `, ` + hourAgo + `, ` + hourAgo + `, 1),
		('a', 'QUEUED', '', 7, ` + now + `, 1, ` + now + `, ` + now + `, NULL, NULL, NULL, NULL, 0),
		('a', 'RUNNING', '', 3, ` + hourAgo + `, 2, ` + hourAgo + `, ` + hourAgo + `, 'dead', ` + secondAgo + `, ` + hourAgo + `, NULL, 1)`
}

// CheckUpgradeFromVersion3 checks, on b migrated from version 3 with
// Version3Rows, that every task kept the instant that matters in its
// status (a queued one its available_at, a running one its lease end, a
// finished one when it finished), so that claims, recovery and retention
// find it.
func CheckUpgradeFromVersion3(t *testing.T, b *Bundle) {
	t.Helper()
	queued, err := b.Client.Get(bg, 2)
	dbtest.Must(t, "get the queued task", err)
	if !queued.StartedAt.IsZero() || queued.LeaseOwner != "" || queued.Priority != 7 {
		t.Errorf("queued task after the upgrade: started %v, lease owner %q, priority %d", queued.StartedAt, queued.LeaseOwner, queued.Priority)
	}
	ran := make(chan runtime.TaskID, 2)
	cfg := Config()
	cfg.MaxConcurrency = 1 // one claim, one task: the order of claims is the order of runs
	b.StartWorker(t, cfg, map[string]runtime.HandlerFunc{"a": func(_ context.Context, task *runtime.Task) error {
		ran <- task.ID
		return nil
	}})
	// The queued task runs at once, the expired lease after recovery.
	b.WaitStatus(t, 2, runtime.StatusSuccess, 5*time.Second)
	b.WaitStatus(t, 3, runtime.StatusSuccess, 10*time.Second)
	if first := <-ran; first != 2 {
		t.Errorf("task %d ran first, want the queued task 2", first)
	}
	finished, err := b.Client.Get(bg, 1)
	dbtest.Must(t, "get the finished task", err)
	if age := time.Since(finished.FinishedAt); age < 50*time.Minute || finished.LeaseOwner != "old" {
		t.Errorf("finished task after the upgrade: finished %v ago by %q, want an hour ago by \"old\"", age, finished.LeaseOwner)
	}
	purged, err := b.Client.Purge(bg, time.Minute, 10)
	dbtest.Must(t, "purge", err)
	if purged != 1 {
		t.Errorf("purge of tasks finished over a minute ago deleted %d, want the 1 finished before the upgrade", purged)
	}
}

// CheckIndexes fails t unless db has every index of current and none of
// dropped, counting them with query (one argument: an index name).
func CheckIndexes(t *testing.T, db *DB, query string, current, dropped []string) {
	t.Helper()
	for _, index := range current {
		if db.Int(t, query, index) == 0 {
			t.Errorf("index %s missing", index)
		}
	}
	for _, index := range dropped {
		if db.Int(t, query, index) != 0 {
			t.Errorf("index %s still there", index)
		}
	}
}
