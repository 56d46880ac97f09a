package runtime

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/internal/bookkeeping"
)

// pruneBatch is how many finished tasks one retention statement deletes:
// small, so each DELETE holds its locks briefly.
const pruneBatch = 500

// pruner deletes finished tasks older than retention every interval, in
// batches of batch, until a batch comes back short. Several workers may
// prune at once: each statement deletes rows the others did not.
type pruner struct {
	tables    driver.Tables
	logger    *slog.Logger
	workerID  string
	retention time.Duration
	interval  time.Duration // between passes; also bounds each statement
	batch     int
	pause     time.Duration // between the batches of a pass
	pruned    *atomic.Int64 // the worker's count
}

func newPruner(w *Worker) *pruner {
	return &pruner{
		tables: w.engine.tables, logger: w.cfg.Logger, workerID: w.cfg.WorkerID, retention: w.cfg.Retention,
		interval: w.cfg.RetentionInterval, batch: pruneBatch, pause: w.cfg.RecoveryPause, pruned: &w.stats.pruned,
	}
}

func (p *pruner) run(ctx context.Context, stop <-chan struct{}) {
	ticker := time.NewTicker(p.interval)
	defer ticker.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ticker.C:
		}
		if p.pass(ctx, stop) > 0 {
			p.purgeAttempts(ctx, stop)
		}
	}
}

// purgeAttempts deletes the recorded attempts of the tasks a pass deleted,
// a batch of tasks at a time.
func (p *pruner) purgeAttempts(ctx context.Context, stop <-chan struct{}) {
	for {
		batchCtx, cancel := context.WithTimeout(ctx, p.interval)
		n, err := bookkeeping.PurgeAttempts(batchCtx, p.tables, p.batch)
		cancel()
		if err != nil {
			p.logger.Error("leasegen: retention of attempt histories failed", "worker", p.workerID, "err", err)
			return
		}
		if n == 0 {
			return
		}
		select {
		case <-stop:
			return
		case <-time.After(p.pause):
		}
	}
}

// pass deletes batches until one comes back short and returns how many
// tasks it deleted.
func (p *pruner) pass(ctx context.Context, stop <-chan struct{}) int {
	total := 0
	for {
		batchCtx, cancel := context.WithTimeout(ctx, p.interval)
		n, err := p.tables.TaskPurge(batchCtx, p.retention, p.batch)
		cancel()
		if err != nil {
			p.logger.Error("leasegen: retention failed", "worker", p.workerID, "err", err)
			return total
		}
		total += n
		p.pruned.Add(int64(n))
		if n < p.batch {
			return total
		}
		select {
		case <-stop:
			return total
		case <-time.After(p.pause):
		}
	}
}
