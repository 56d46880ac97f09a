package runtime

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/internal/bookkeeping"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// localWorkers holds this process's started workers, by database handle
// and id: a row of this host and pid is a crashed predecessor's only when no
// worker of this process holds its id.
var localWorkers sync.Map

// localWorker is a key of localWorkers.
type localWorker struct {
	db *sql.DB
	id string
}

// WorkerInfo is a live worker, as its row in leasegen_workers shows it.
type WorkerInfo = leasetype.WorkerInfo

// Workers lists the live workers, by id.
func (c *Client) Workers(ctx context.Context) ([]WorkerInfo, error) {
	workers, err := c.engine.tables.WorkerListLive(ctx)
	return workers, c.engine.failed(err, "list live workers")
}

// registration is the worker's row.
func (w *Worker) registration(req driver.ClaimRequest) driver.WorkerRegistration {
	host, _ := os.Hostname()
	limits := map[string]int{}
	for _, t := range req.Types {
		limits[t] = req.TypeLimits[t]
	}
	return driver.WorkerRegistration{
		ID: w.cfg.WorkerID, Host: host, PID: os.Getpid(),
		MaxConcurrency: w.cfg.MaxConcurrency, GlobalLimit: req.GlobalLimit, TaskLimits: limits,
		Schedules: scheduleNames(w.schedules), TTL: 2 * w.cfg.RecoveryInterval,
	}
}

// admit returns the first way the worker's registration conflicts with a
// live worker: the same id, unless that row is a dead predecessor of this
// process (same host, and its process is gone or is this one), or limits
// that differ for a scope both count.
func (w *Worker) admit(live []WorkerInfo) error {
	r, db := w.reg, w.engine.db
	for _, o := range live {
		if o.ID == r.ID {
			if _, here := localWorkers.Load(localWorker{db, r.ID}); !here && o.Host == r.Host && (o.PID == r.PID || processGone(o.PID)) {
				continue // a crashed predecessor's row on this host (a restarted container has the same pid)
			}
			return fmt.Errorf("%w: %q is held by a live worker on %s (pid %d, started %s, alive until %s): give each worker its own Config.WorkerID, or leave it empty for a unique default",
				ErrWorkerIDInUse, r.ID, o.Host, o.PID, o.StartedAt.Format(time.RFC3339), o.AliveUntil.Format(time.RFC3339))
		}
		if o.GlobalLimit != r.GlobalLimit {
			return limitMismatch("GlobalLimit", r.GlobalLimit, o.GlobalLimit, o)
		}
		for _, t := range slices.Sorted(maps.Keys(r.TaskLimits)) {
			if theirs, both := o.TaskLimits[t]; both && theirs != r.TaskLimits[t] {
				return limitMismatch(fmt.Sprintf("task type %q's concurrency", t), r.TaskLimits[t], theirs, o)
			}
		}
	}
	return nil
}

// limitMismatch explains a limit that is mine here and theirs on live
// worker o.
func limitMismatch(what string, mine, theirs int, o WorkerInfo) error {
	return fmt.Errorf("%w: %s is %s here but %s on live worker %q (%s, pid %d): set the same value on every worker; to change it, stop the workers with the old value first",
		ErrLimitMismatch, what, limitText(mine), limitText(theirs), o.ID, o.Host, o.PID)
}

func limitText(n int) string {
	if n == 0 {
		return "none"
	}
	return fmt.Sprint(n)
}

// renewRegistration renews the worker's row, once per recovery pass.
func (w *Worker) renewRegistration(ctx context.Context) {
	present, err := bookkeeping.RenewWorker(ctx, w.engine.tables, w.reg)
	switch {
	case err != nil:
		w.cfg.Logger.Warn("leasegen: renewing the worker's row failed", "worker", w.cfg.WorkerID, "err", err)
	case !present:
		w.cfg.Logger.Warn("leasegen: the worker's row had expired (renewals failed for two RecoveryIntervals); it is registered again",
			"worker", w.cfg.WorkerID)
	}
}
