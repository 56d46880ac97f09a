package runtime

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/leasegen/leasegen/runtime/driver"

	"github.com/leasegen/leasegen/runtime/internal/sqlitedb"
)

// RegisterWorker runs in one write transaction, which serializes starting
// workers.
func (s *sqliteStore) RegisterWorker(ctx context.Context, r driver.WorkerRegistration) error {
	return s.immediate(ctx, func(conn *sql.Conn) error {
		if err := s.q.WorkerDeleteExpired(ctx, conn); err != nil {
			return fmt.Errorf("leasegen: delete dead workers' rows: %w", err)
		}
		rows, err := s.q.WorkerListLive(ctx, conn)
		if err != nil {
			return fmt.Errorf("leasegen: list live workers: %w", err)
		}
		if err := checkWorkerConflicts(s.db, r, workersFromSQLite(rows)); err != nil {
			return err
		}
		if err := s.q.WorkerDelete(ctx, conn, sqlitedb.WorkerDeleteParams{WorkerID: r.ID}); err != nil { // a predecessor's row on this host
			return fmt.Errorf("leasegen: replace worker %q's old row: %w", r.ID, err)
		}
		if _, err := s.q.WorkerInsert(ctx, conn, sqliteWorkerRow(r)); err != nil {
			return fmt.Errorf("leasegen: register worker %q: %w", r.ID, err)
		}
		return nil
	})
}

func (s *sqliteStore) RenewWorker(ctx context.Context, r driver.WorkerRegistration) (bool, error) {
	var renewed, inserted int64
	err := s.retry(ctx, func() error {
		var err error
		if renewed, err = s.q.WorkerRenew(ctx, s.db, sqlitedb.WorkerRenewParams{TtlMs: millis(r.TTL), WorkerID: r.ID}); err != nil || renewed > 0 {
			return err
		}
		inserted, err = s.q.WorkerInsert(ctx, s.db, sqliteWorkerRow(r))
		return err
	})
	switch {
	case err != nil:
		return false, fmt.Errorf("leasegen: renew worker %q's row: %w", r.ID, err)
	case renewed > 0:
		return true, nil
	case inserted == 0:
		return false, fmt.Errorf("%w: %q was taken by another worker after this one's row expired: stop one of them", ErrWorkerIDInUse, r.ID)
	}
	return false, nil
}

func (s *sqliteStore) UnregisterWorker(ctx context.Context, id string) error {
	err := s.retry(ctx, func() error { return s.q.WorkerDelete(ctx, s.db, sqlitedb.WorkerDeleteParams{WorkerID: id}) })
	if err != nil {
		return fmt.Errorf("leasegen: delete worker %q's row: %w", id, err)
	}
	return nil
}

func (s *sqliteStore) LiveWorkers(ctx context.Context) ([]WorkerInfo, error) {
	rows, err := s.q.WorkerListLive(ctx, s.db)
	if err != nil {
		return nil, fmt.Errorf("leasegen: list live workers: %w", err)
	}
	return workersFromSQLite(rows), nil
}

func sqliteWorkerRow(r driver.WorkerRegistration) sqlitedb.WorkerInsertParams {
	return sqlitedb.WorkerInsertParams{
		WorkerID: r.ID, Host: r.Host, Pid: int64(r.PID), TtlMs: millis(r.TTL),
		MaxConcurrency: int64(r.MaxConcurrency), GlobalLimit: int64(r.GlobalLimit), TaskLimits: encodeLimits(r.TaskLimits),
	}
}

func workersFromSQLite(rows []sqlitedb.LeasegenWorker) []WorkerInfo {
	out := make([]WorkerInfo, len(rows))
	for i, r := range rows {
		out[i] = WorkerInfo{
			ID: r.WorkerID, Host: r.Host, PID: int(r.Pid), StartedAt: fromMillis(r.StartedAt), AliveUntil: fromMillis(r.AliveUntil),
			MaxConcurrency: int(r.MaxConcurrency), GlobalLimit: int(r.GlobalLimit), TaskLimits: decodeLimits(r.TaskLimits),
		}
	}
	return out
}
