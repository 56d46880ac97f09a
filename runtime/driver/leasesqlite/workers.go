package leasesqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/driver/leasesqlite/internal/sqlitedb"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// RegisterWorker runs in one write transaction, which serializes starting
// workers.
func (s *store) RegisterWorker(ctx context.Context, r driver.WorkerRegistration, admit func(live []leasetype.WorkerInfo) error) error {
	return s.immediate(ctx, func(conn *sql.Conn) error {
		if err := s.q.WorkerDeleteExpired(ctx, conn); err != nil {
			return fmt.Errorf("leasegen: delete dead workers' rows: %w", err)
		}
		rows, err := s.q.WorkerListLive(ctx, conn)
		if err != nil {
			return fmt.Errorf("leasegen: list live workers: %w", err)
		}
		if err := admit(workersFromSQLite(rows)); err != nil {
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

func (s *store) RenewWorker(ctx context.Context, r driver.WorkerRegistration) (bool, error) {
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
		return false, fmt.Errorf("%w: %q was taken by another worker after this one's row expired: stop one of them", leasetype.ErrWorkerIDInUse, r.ID)
	}
	return false, nil
}

func (s *store) UnregisterWorker(ctx context.Context, id string) error {
	err := s.retry(ctx, func() error { return s.q.WorkerDelete(ctx, s.db, sqlitedb.WorkerDeleteParams{WorkerID: id}) })
	if err != nil {
		return fmt.Errorf("leasegen: delete worker %q's row: %w", id, err)
	}
	return nil
}

func (s *store) LiveWorkers(ctx context.Context) ([]leasetype.WorkerInfo, error) {
	rows, err := s.q.WorkerListLive(ctx, s.db)
	if err != nil {
		return nil, fmt.Errorf("leasegen: list live workers: %w", err)
	}
	return workersFromSQLite(rows), nil
}

func sqliteWorkerRow(r driver.WorkerRegistration) sqlitedb.WorkerInsertParams {
	return sqlitedb.WorkerInsertParams{
		WorkerID: r.ID, Host: r.Host, Pid: int64(r.PID), TtlMs: millis(r.TTL),
		MaxConcurrency: int64(r.MaxConcurrency), GlobalLimit: int64(r.GlobalLimit), TaskLimits: sqlbuild.EncodeLimits(r.TaskLimits),
		Schedules: sqlbuild.EncodeNames(r.Schedules),
	}
}

func workersFromSQLite(rows []sqlitedb.LeasegenWorker) []leasetype.WorkerInfo {
	out := make([]leasetype.WorkerInfo, len(rows))
	for i, r := range rows {
		out[i] = leasetype.WorkerInfo{
			ID: r.WorkerID, Host: r.Host, PID: int(r.Pid), StartedAt: fromMillis(r.StartedAt), AliveUntil: fromMillis(r.AliveUntil),
			MaxConcurrency: int(r.MaxConcurrency), GlobalLimit: int(r.GlobalLimit), TaskLimits: sqlbuild.DecodeLimits(r.TaskLimits),
			Schedules: sqlbuild.DecodeNames(r.Schedules),
		}
	}
	return out
}
