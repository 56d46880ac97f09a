package leasemysql

import (
	"context"
	"fmt"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/driver/leasemysql/internal/mysqldb"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

func (s *store) RegisterWorker(ctx context.Context, r driver.WorkerRegistration, admit func(live []leasetype.WorkerInfo) error) error {
	return s.retry(ctx, func() error {
		return s.boundedTx(ctx, claimSessionIdle, func(tx mysqldb.DBTX) error {
			if err := s.q.WorkerLockRegistry(ctx, tx); err != nil {
				return fmt.Errorf("leasegen: lock the worker registry: %w", err)
			}
			if err := s.q.WorkerDeleteExpired(ctx, tx); err != nil {
				return fmt.Errorf("leasegen: delete dead workers' rows: %w", err)
			}
			rows, err := s.q.WorkerListLive(ctx, tx)
			if err != nil {
				return fmt.Errorf("leasegen: list live workers: %w", err)
			}
			live := workersFromMySQL(rows)
			if err := admit(live); err != nil {
				return err
			}
			if err := s.q.WorkerDelete(ctx, tx, mysqldb.WorkerDeleteParams{WorkerID: r.ID}); err != nil { // a predecessor's row on this host
				return fmt.Errorf("leasegen: replace worker %q's old row: %w", r.ID, err)
			}
			_, err = s.q.WorkerInsert(ctx, tx, mysqlWorkerRow(r))
			if err != nil {
				return fmt.Errorf("leasegen: register worker %q: %w", r.ID, err)
			}
			return nil
		})
	})
}

func (s *store) RenewWorker(ctx context.Context, r driver.WorkerRegistration) (bool, error) {
	n, err := s.q.WorkerRenew(ctx, s.db, mysqldb.WorkerRenewParams{TtlUs: micros(r.TTL), WorkerID: r.ID})
	if err != nil {
		return false, fmt.Errorf("leasegen: renew worker %q's row: %w", r.ID, err)
	}
	if n > 0 {
		return true, nil
	}
	n, err = s.q.WorkerInsert(ctx, s.db, mysqlWorkerRow(r))
	if err != nil {
		return false, fmt.Errorf("leasegen: register worker %q again: %w", r.ID, err)
	}
	if n == 0 {
		return false, fmt.Errorf("%w: %q was taken by another worker after this one's row expired: stop one of them", leasetype.ErrWorkerIDInUse, r.ID)
	}
	return false, nil
}

func (s *store) UnregisterWorker(ctx context.Context, id string) error {
	if err := s.q.WorkerDelete(ctx, s.db, mysqldb.WorkerDeleteParams{WorkerID: id}); err != nil {
		return fmt.Errorf("leasegen: delete worker %q's row: %w", id, err)
	}
	return nil
}

func (s *store) LiveWorkers(ctx context.Context) ([]leasetype.WorkerInfo, error) {
	rows, err := s.q.WorkerListLive(ctx, s.db)
	if err != nil {
		return nil, fmt.Errorf("leasegen: list live workers: %w", err)
	}
	return workersFromMySQL(rows), nil
}

func mysqlWorkerRow(r driver.WorkerRegistration) mysqldb.WorkerInsertParams {
	return mysqldb.WorkerInsertParams{
		WorkerID: r.ID, Host: r.Host, Pid: int32(r.PID), TtlUs: micros(r.TTL),
		MaxConcurrency: int32(r.MaxConcurrency), GlobalLimit: int32(r.GlobalLimit), TaskLimits: sqlbuild.EncodeLimits(r.TaskLimits),
		Schedules: sqlbuild.EncodeNames(r.Schedules),
	}
}

func workersFromMySQL(rows []mysqldb.LeasegenWorker) []leasetype.WorkerInfo {
	out := make([]leasetype.WorkerInfo, len(rows))
	for i, r := range rows {
		out[i] = leasetype.WorkerInfo{
			ID: r.WorkerID, Host: r.Host, PID: int(r.Pid), StartedAt: r.StartedAt, AliveUntil: r.AliveUntil,
			MaxConcurrency: int(r.MaxConcurrency), GlobalLimit: int(r.GlobalLimit), TaskLimits: sqlbuild.DecodeLimits(r.TaskLimits),
			Schedules: sqlbuild.DecodeNames(r.Schedules),
		}
	}
	return out
}
