package runtime

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/internal/bookkeeping"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// recoverer resolves expired leases, of any worker's tasks, once at start
// and then every interval, and keeps its worker's row alive.
type recoverer struct {
	driver   driver.Driver
	tables   driver.Tables
	observer Observer
	logger   *slog.Logger
	workerID string
	interval time.Duration // between passes; also bounds each statement
	// A pass runs up to maxBatches batches of batch tasks, pause apart.
	batch, maxBatches int
	pause             time.Duration
	recovered         *atomic.Int64 // the worker's count
	keep              int           // Config.AttemptHistory
	// historyWait bounds the write of the recovered attempts' history:
	// the lease, at least a recovery interval. The tasks are queued again
	// before it starts, so a slow write delays no recovery of theirs.
	historyWait time.Duration
	// found wakes the worker's poller: recovered tasks are claimable.
	found func()
	// renewRow renews the worker's row after each pass.
	renewRow func(ctx context.Context)
	// stepsCursor is the last waiting step the previous pass read (0: it
	// read the last one; this pass starts from the first).
	stepsCursor leasetype.TaskID
	// workflowsCursor is the last open workflow the previous pass read (0:
	// it read the last one).
	workflowsCursor leasetype.WorkflowID
}

func newRecoverer(w *Worker) *recoverer {
	return &recoverer{
		driver: w.engine.driver, tables: w.engine.tables, observer: w.engine.observer, logger: w.cfg.Logger, workerID: w.cfg.WorkerID,
		interval: w.cfg.RecoveryInterval, batch: w.cfg.RecoveryBatchSize, maxBatches: w.cfg.RecoveryMaxBatches,
		pause: w.cfg.RecoveryPause, recovered: &w.stats.recovered, found: w.signal, renewRow: w.renewRegistration,
		keep: w.cfg.AttemptHistory, historyWait: max(w.cfg.LeaseTimeout, w.cfg.RecoveryInterval),
	}
}

func (r *recoverer) run(ctx context.Context, stop <-chan struct{}) {
	ticker := time.NewTicker(r.interval)
	defer ticker.Stop()
	for {
		r.pass(ctx, stop)
		r.releaseStalledKeys(ctx)
		r.settleStalledSteps(ctx)
		r.endWorkflows(ctx)
		select {
		case <-stop:
			return
		case <-ticker.C:
		}
		rowCtx, cancel := context.WithTimeout(ctx, r.interval)
		r.renewRow(rowCtx)
		cancel()
	}
}

// pass runs up to maxBatches batches, pausing between them, and stops
// early when a batch comes back short; it returns how many leases it
// resolved. Most passes find nothing, so a pass first looks with one
// statement, without a transaction or locks.
func (r *recoverer) pass(ctx context.Context, stop <-chan struct{}) int {
	lookCtx, cancel := context.WithTimeout(ctx, r.interval)
	expired, err := r.driver.LeasesExpired(lookCtx)
	cancel()
	if err != nil {
		r.logger.Error("leasegen: recovery failed", "worker", r.workerID, "err", err)
		return 0
	}
	total := 0
	for i := 0; expired && i < r.maxBatches; i++ {
		batchCtx, cancel := context.WithTimeout(ctx, r.interval)
		recovered, err := r.driver.RecoverBatch(batchCtx, r.batch)
		cancel()
		if err != nil {
			r.logger.Error("leasegen: recovery failed", "worker", r.workerID, "err", err)
			return total
		}
		for _, t := range recovered {
			r.observer.LeaseRecovered(t.Outcome, t.Overdue)
			r.logger.Info("leasegen: recovered expired lease", "worker", r.workerID,
				"task_id", t.ID, "outcome", t.Outcome, "overdue", t.Overdue)
		}
		r.remember(ctx, recovered)
		total += len(recovered)
		r.recovered.Add(int64(len(recovered)))
		if len(recovered) > 0 {
			r.found()
		}
		if len(recovered) < r.batch {
			return total
		}
		select {
		case <-stop:
			return total
		case <-time.After(r.pause):
		}
	}
	return total
}

// remember stores, in their tasks' histories, the attempts whose leases
// expired and whose tasks recovery queued again (the row keeps those it
// ended).
func (r *recoverer) remember(ctx context.Context, recovered []driver.RecoveredTask) {
	var recs []driver.AttemptRecord
	for _, t := range recovered {
		if t.Outcome == driver.RecoveryRequeued {
			recs = append(recs, driver.AttemptRecord{TaskID: t.ID, Attempt: t.Attempt, Worker: t.Owner, StartedAt: t.StartedAt,
				Outcome: leasetype.AttemptLeaseLost, Error: fmt.Sprintf("lease expired %s before recovery", t.Overdue.Round(time.Millisecond))})
		}
	}
	if len(recs) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, r.historyWait)
	defer cancel()
	if err := bookkeeping.RecordAttempts(ctx, r.tables, recs, r.keep); err != nil {
		r.logger.Warn("leasegen: recording recovered attempts in their tasks' histories failed", "worker", r.workerID, "err", err)
	}
}

// stalledKeyBatch bounds the keys one pass releases.
const stalledKeyBatch = 100

// releaseStalledKeys hands on the free slots of concurrency keys whose
// tasks ended without a release: their worker died in between, or lost
// the lease, and recovery ended the task. Then it deletes a batch of the
// key rates' slots that are long free, which a release treats as free
// when missing too.
func (r *recoverer) releaseStalledKeys(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, r.interval)
	defer cancel()
	keys, released, err := bookkeeping.ReleaseStalledKeys(ctx, r.tables, stalledKeyBatch)
	if err != nil {
		r.logger.Error("leasegen: releasing stalled concurrency keys failed", "worker", r.workerID, "err", err)
		return
	}
	if keys > 0 {
		r.observer.KeysReleased(keys, released)
		r.logger.Info("leasegen: released stalled concurrency keys", "worker", r.workerID, "keys", keys, "tasks", released)
		r.found()
	}
	if _, err := r.tables.FlowSlotsPrune(ctx, stalledKeyBatch); err != nil {
		r.logger.Error("leasegen: deleting the free slots of key rates failed", "worker", r.workerID, "err", err)
	}
}
