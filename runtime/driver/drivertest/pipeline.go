package drivertest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime"
)

// Two workers of 4 slots each, with the claim pipeline on, burn down 3,000
// quick tasks that commit an effect: the database holds more of their
// tasks RUNNING than they have slots (tasks leased ahead, waiting for a
// slot; without it a worker holds at most twice its slots: those running
// and those whose outcomes are being written), yet no more than 4 handlers of a worker run at once, every task
// succeeds with one effect, and no two executions of a task overlap.
func testPipelineRunsAheadWithinSlots(t *testing.T, b *Bundle) {
	const (
		tasks   = 3000
		workers = 2
		slots   = 4
	)
	b.DB.MustExec(t, EffectsTable)
	reqs := make([]runtime.Request, tasks)
	for i := range reqs {
		reqs[i] = runtime.Request{Type: "quick", Payload: []byte(`{}`)}
	}
	_, err := b.Client.EnqueueMany(bg, reqs)
	dbtest.Must(t, "enqueue", err)

	var book Ledger
	perWorker := make([]*Ledger, workers)
	for i := range workers {
		perWorker[i] = &Ledger{}
		cfg := Config()
		cfg.WorkerID = fmt.Sprintf("p%d", i)
		cfg.MaxConcurrency = slots
		owner, mine := cfg.WorkerID, perWorker[i]
		b.StartWorker(t, cfg, map[string]runtime.HandlerFunc{"quick": func(ctx context.Context, task *runtime.Task) error {
			n, j := book.Start(task, owner), mine.Start(task, owner)
			err := b.H.CommitEffect(ctx, b.DB.DB, task, owner, func() { book.End(n); mine.End(j) })
			return mine.EndIfFailed(j, book.EndIfFailed(n, err))
		}})
	}
	sampled := sampleRunning(t, b.DB.DB, func() bool {
		return b.DB.Int(t, "SELECT COUNT(*) FROM leasegen_tasks WHERE status <> 'SUCCESS'") == 0
	}, 2*time.Minute)

	reran := CheckLedger(t, book.Intervals())
	CheckEffects(t, b.DB, tasks)
	for i, l := range perWorker {
		if n, _ := maxRunning(l.Intervals()); n > slots {
			t.Errorf("worker p%d ran %d handlers at once, with %d slots", i, n, slots)
		}
	}
	// Without the pipeline a worker holds its slots' tasks and as many
	// whose outcomes are being written.
	if sampled.total <= 2*workers*slots {
		t.Errorf("the database never held more than %d tasks RUNNING (%d samples): the pipeline did not lease ahead", sampled.total, sampled.samples)
	}
	t.Logf("%d tasks, %d workers x %d slots: up to %d RUNNING in the database, %d ran again", tasks, workers, slots, sampled.total, reran)
}
