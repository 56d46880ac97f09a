package bookkeeping

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
)

// PruneBatch is how many finished tasks one retention statement deletes:
// small, so each DELETE holds its locks briefly.
const PruneBatch = 500

// Pruner deletes finished tasks older than Retention every Interval, in
// batches of Batch, until a batch comes back short, then the attempts and
// workflow steps of the tasks it deleted. Several workers may prune at once: each statement
// deletes rows the others did not.
type Pruner struct {
	Tables    driver.Tables
	Logger    *slog.Logger
	WorkerID  string
	Retention time.Duration
	Interval  time.Duration // between passes
	Bound     time.Duration // bounds each statement
	Batch     int
	Pause     time.Duration // between the batches of a pass
	Pruned    *atomic.Int64 // the worker's count
}

// Run prunes every Interval until stop is closed.
func (p *Pruner) Run(ctx context.Context, stop <-chan struct{}) {
	ticker := time.NewTicker(p.Interval)
	defer ticker.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ticker.C:
		}
		if p.Pass(ctx, stop) > 0 {
			p.purgeLeftovers(ctx, stop, "attempt histories", PurgeAttempts)
			p.purgeLeftovers(ctx, stop, "workflow steps", PurgeWorkflows)
		}
	}
}

// purgeLeftovers runs purge, a batch at a time, until a batch deletes
// nothing: what retention leaves of the tasks a pass deleted (named by
// what, for the log).
func (p *Pruner) purgeLeftovers(ctx context.Context, stop <-chan struct{}, what string, purge func(context.Context, driver.Tables, int) (int, error)) {
	for {
		batchCtx, cancel := context.WithTimeout(ctx, p.Bound)
		n, err := purge(batchCtx, p.Tables, p.Batch)
		cancel()
		if err != nil {
			p.Logger.Error("leasegen: retention of "+what+" failed", "worker", p.WorkerID, "err", err)
			return
		}
		if n == 0 {
			return
		}
		select {
		case <-stop:
			return
		case <-time.After(p.Pause):
		}
	}
}

// Pass deletes batches until one comes back short and returns how many
// tasks it deleted.
func (p *Pruner) Pass(ctx context.Context, stop <-chan struct{}) int {
	total := 0
	for {
		batchCtx, cancel := context.WithTimeout(ctx, p.Bound)
		n, err := p.Tables.TaskPurge(batchCtx, p.Retention, p.Batch)
		cancel()
		if err != nil {
			p.Logger.Error("leasegen: retention failed", "worker", p.WorkerID, "err", err)
			return total
		}
		total += n
		p.Pruned.Add(int64(n))
		if n < p.Batch {
			return total
		}
		select {
		case <-stop:
			return total
		case <-time.After(p.Pause):
		}
	}
}
