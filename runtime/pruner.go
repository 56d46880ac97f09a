package runtime

import (
	"context"
	"time"
)

// pruneBatch is how many finished tasks one retention statement deletes:
// small, so each DELETE holds its locks briefly.
const pruneBatch = 500

// pruneLoop deletes finished tasks older than Config.Retention every
// RetentionInterval, in batches, until a batch comes back short. Several
// workers may prune at once: each statement deletes rows the others did not.
func (w *Worker) pruneLoop() {
	defer w.loopsDone.Done()
	ticker := time.NewTicker(w.cfg.RetentionInterval)
	defer ticker.Stop()
	for {
		select {
		case <-w.stopLoops:
			return
		case <-ticker.C:
		}
		for {
			ctx, cancel := context.WithTimeout(w.runCtx, w.cfg.RetentionInterval)
			n, err := w.engine.driver.PurgeBatch(ctx, w.cfg.Retention, pruneBatch)
			cancel()
			if err != nil {
				w.cfg.Logger.Error("leasegen: retention failed", "worker", w.cfg.WorkerID, "err", err)
				break
			}
			w.stats.pruned.Add(int64(n))
			if n < pruneBatch {
				break
			}
			select {
			case <-w.stopLoops:
				return
			case <-time.After(w.cfg.RecoveryPause):
			}
		}
	}
}
