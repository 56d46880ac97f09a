package runtime

import (
	"context"
	"database/sql"
	"os"
	"slices"
	"sync"

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

// heldHere reports whether a worker of this process holds id on db.
func heldHere(db *sql.DB, id string) bool {
	_, here := localWorkers.Load(localWorker{db, id})
	return here
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

// lookForPeers records whether other workers that handle one of this
// worker's task types are alive on the database: while they are, this
// worker's claims take turns with theirs (driver.ClaimRequest.TakeTurns).
// Workers of other types never lock the rows it claims, so they do not
// count. A failed read keeps what it knew.
func (w *Worker) lookForPeers(ctx context.Context) {
	live, err := w.engine.tables.WorkerListLive(ctx)
	if err != nil {
		w.cfg.Logger.Warn("leasegen: listing the live workers failed", "worker", w.cfg.WorkerID, "err", err)
		return
	}
	w.peers.Store(slices.ContainsFunc(live, func(o WorkerInfo) bool { return o.ID != w.reg.ID && sharesType(o, w.reg.TaskLimits) }))
}

// sharesType reports whether worker o handles one of types.
func sharesType(o WorkerInfo, types map[string]int) bool {
	for t := range o.TaskLimits {
		if _, ok := types[t]; ok {
			return true
		}
	}
	return false
}

// renewRegistration renews the worker's row, once per recovery pass, and
// looks for peers when claims found work since the last pass (an idle
// worker's claims do not need to know).
func (w *Worker) renewRegistration(ctx context.Context) {
	if w.busy.Swap(false) {
		w.lookForPeers(ctx)
	}
	present, err := bookkeeping.RenewWorker(ctx, w.engine.tables, w.reg)
	switch {
	case err != nil:
		w.cfg.Logger.Warn("leasegen: renewing the worker's row failed", "worker", w.cfg.WorkerID, "err", err)
	case !present:
		w.cfg.Logger.Warn("leasegen: the worker's row had expired (renewals failed for two RecoveryIntervals); it is registered again",
			"worker", w.cfg.WorkerID)
	}
}
