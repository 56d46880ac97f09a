package runtime

import (
	"context"
	"time"
)

// recoveryLoop renews the worker's row and resolves expired leases once at
// start and then every RecoveryInterval.
func (w *Worker) recoveryLoop() {
	defer w.loopsDone.Done()
	ticker := time.NewTicker(w.cfg.RecoveryInterval)
	defer ticker.Stop()
	for {
		w.recoverPass()
		select {
		case <-w.stopLoops:
			return
		case <-ticker.C:
		}
		ctx, cancel := context.WithTimeout(w.runCtx, w.cfg.RecoveryInterval)
		w.renewRegistration(ctx)
		cancel()
	}
}

// recoverPass runs up to RecoveryMaxBatches batches, pausing between them,
// and stops early when a batch comes back short. Most passes find nothing,
// so a pass first looks with one statement, without a transaction or locks.
func (w *Worker) recoverPass() {
	ctx, cancel := context.WithTimeout(w.runCtx, w.cfg.RecoveryInterval)
	expired, err := w.engine.driver.LeasesExpired(ctx)
	cancel()
	if err != nil {
		w.cfg.Logger.Error("leasegen: recovery failed", "worker", w.cfg.WorkerID, "err", err)
		return
	}
	if !expired {
		return
	}
	for range w.cfg.RecoveryMaxBatches {
		ctx, cancel := context.WithTimeout(w.runCtx, w.cfg.RecoveryInterval)
		recovered, err := w.engine.driver.RecoverBatch(ctx, w.cfg.RecoveryBatchSize)
		cancel()
		if err != nil {
			w.cfg.Logger.Error("leasegen: recovery failed", "worker", w.cfg.WorkerID, "err", err)
			return
		}
		for _, r := range recovered {
			w.engine.observer.LeaseRecovered(r.Outcome, r.Overdue)
			w.cfg.Logger.Info("leasegen: recovered expired lease", "worker", w.cfg.WorkerID,
				"task_id", r.ID, "outcome", r.Outcome, "overdue", r.Overdue)
		}
		w.stats.recovered.Add(int64(len(recovered)))
		if len(recovered) > 0 {
			w.signal()
		}
		if len(recovered) < w.cfg.RecoveryBatchSize {
			return
		}
		select {
		case <-w.stopLoops:
			return
		case <-time.After(w.cfg.RecoveryPause):
		}
	}
}
