package bookkeeping

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// RegisterWorker deletes the rows of dead workers and inserts r's row, in
// one transaction under the registry's lock, so that workers that start
// at once register one after the other, unless r conflicts with a live
// worker: a live worker with its id (heldHere says a worker of this
// process holds it, so a row of this host and pid is not a crashed
// predecessor's), or other limits for a scope both count. Those are errors
// wrapping leasetype.ErrWorkerIDInUse and leasetype.ErrLimitMismatch. A
// crashed predecessor's row is replaced.
func RegisterWorker(ctx context.Context, t driver.Tables, r driver.WorkerRegistration, heldHere bool) error {
	return t.InTx(ctx, func(tx driver.Tables) error {
		if err := tx.WorkerLockRegistry(ctx); err != nil {
			return fmt.Errorf("leasegen: lock the worker registry: %w", err)
		}
		if err := tx.WorkerDeleteExpired(ctx); err != nil {
			return fmt.Errorf("leasegen: delete dead workers' rows: %w", err)
		}
		live, err := tx.WorkerListLive(ctx)
		if err != nil {
			return fmt.Errorf("leasegen: list live workers: %w", err)
		}
		if err := admit(r, live, heldHere); err != nil {
			return err
		}
		if err := tx.WorkerDelete(ctx, r.ID); err != nil {
			return fmt.Errorf("leasegen: replace worker %q's old row: %w", r.ID, err)
		}
		if _, err := tx.WorkerInsert(ctx, r); err != nil {
			return fmt.Errorf("leasegen: register worker %q: %w", r.ID, err)
		}
		return nil
	})
}

// RenewWorker moves r's row's expiry; when the row is gone it inserts it
// again and reports false. A row another worker inserted with r's id in
// the meantime is an error wrapping leasetype.ErrWorkerIDInUse.
func RenewWorker(ctx context.Context, t driver.Tables, r driver.WorkerRegistration) (bool, error) {
	renewed, err := t.WorkerRenew(ctx, r.ID, r.TTL)
	if err != nil {
		return false, fmt.Errorf("leasegen: renew worker %q's row: %w", r.ID, err)
	}
	if renewed {
		return true, nil
	}
	inserted, err := t.WorkerInsert(ctx, r)
	if err != nil {
		return false, fmt.Errorf("leasegen: register worker %q again: %w", r.ID, err)
	}
	if !inserted {
		return false, fmt.Errorf("%w: %q was taken by another worker after this one's row expired: stop one of them", leasetype.ErrWorkerIDInUse, r.ID)
	}
	return false, nil
}

// UnregisterWorker deletes worker id's row.
func UnregisterWorker(ctx context.Context, t driver.Tables, id string) error {
	if err := t.WorkerDelete(ctx, id); err != nil {
		return fmt.Errorf("leasegen: delete worker %q's row: %w", id, err)
	}
	return nil
}

// admit returns the first way registration r conflicts with a live
// worker: the same id, unless that row is a dead predecessor of this
// process (same host, and its process is gone or is this one, while no
// worker of this process holds the id: heldHere false), or limits that
// differ for a scope both count.
func admit(r driver.WorkerRegistration, live []leasetype.WorkerInfo, heldHere bool) error {
	for _, o := range live {
		if o.ID == r.ID {
			if !heldHere && o.Host == r.Host && (o.PID == r.PID || processGone(o.PID)) {
				continue // a crashed predecessor's row on this host (a restarted container has the same pid)
			}
			return fmt.Errorf("%w: %q is held by a live worker on %s (pid %d, started %s, alive until %s): give each worker its own Config.WorkerID, or leave it empty for a unique default",
				leasetype.ErrWorkerIDInUse, r.ID, o.Host, o.PID, o.StartedAt.Format(time.RFC3339), o.AliveUntil.Format(time.RFC3339))
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
func limitMismatch(what string, mine, theirs int, o leasetype.WorkerInfo) error {
	return fmt.Errorf("%w: %s is %s here but %s on live worker %q (%s, pid %d): set the same value on every worker; to change it, stop the workers with the old value first",
		leasetype.ErrLimitMismatch, what, limitText(mine), limitText(theirs), o.ID, o.Host, o.PID)
}

func limitText(n int) string {
	if n == 0 {
		return "none"
	}
	return fmt.Sprint(n)
}
