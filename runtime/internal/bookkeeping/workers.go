package bookkeeping

import (
	"context"
	"fmt"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// RegisterWorker deletes the rows of dead workers and inserts r's row, in
// one transaction under the registry's lock, so that workers that start
// at once register one after the other; unless admit, called with the
// live workers under that lock, returns an error, which it returns. A row
// with r's id that admit accepted (a crashed predecessor's) is replaced.
func RegisterWorker(ctx context.Context, t driver.Tables, r driver.WorkerRegistration, admit func(live []leasetype.WorkerInfo) error) error {
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
		if err := admit(live); err != nil {
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
