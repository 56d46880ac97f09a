package leasesqlite

import (
	"context"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/driver/leasesqlite/internal/sqlitedb"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// WorkerLockRegistry has nothing to lock: InTx holds the write lock,
// which serializes registrations.
func (t tables) WorkerLockRegistry(context.Context) error { return nil }

func (t tables) WorkerDeleteExpired(ctx context.Context) error {
	return t.Write(ctx, func() error { return t.s.q.WorkerDeleteExpired(ctx, t.q) })
}

func (t tables) WorkerListLive(ctx context.Context) ([]leasetype.WorkerInfo, error) {
	rows, err := t.s.q.WorkerListLive(ctx, t.q)
	return sqlbuild.Map(rows, func(r sqlitedb.LeasegenWorker) leasetype.WorkerInfo {
		return leasetype.WorkerInfo{
			ID: r.WorkerID, Host: r.Host, PID: int(r.Pid), StartedAt: fromMillis(r.StartedAt), AliveUntil: fromMillis(r.AliveUntil),
			MaxConcurrency: int(r.MaxConcurrency), GlobalLimit: int(r.GlobalLimit), TaskLimits: sqlbuild.DecodeLimits(r.TaskLimits),
			Schedules: sqlbuild.DecodeNames(r.Schedules),
		}
	}), err
}

func (t tables) WorkerInsert(ctx context.Context, r driver.WorkerRegistration) (bool, error) {
	return t.Changed(ctx, func() (int64, error) {
		return t.s.q.WorkerInsert(ctx, t.q, sqlitedb.WorkerInsertParams{
			WorkerID: r.ID, Host: r.Host, Pid: int64(r.PID), TtlMs: millis(r.TTL),
			MaxConcurrency: int64(r.MaxConcurrency), GlobalLimit: int64(r.GlobalLimit), TaskLimits: sqlbuild.EncodeLimits(r.TaskLimits),
			Schedules: sqlbuild.EncodeNames(r.Schedules),
		})
	})
}

func (t tables) WorkerRenew(ctx context.Context, id string, ttl time.Duration) (bool, error) {
	return t.Changed(ctx, func() (int64, error) {
		return t.s.q.WorkerRenew(ctx, t.q, sqlitedb.WorkerRenewParams{TtlMs: millis(ttl), WorkerID: id})
	})
}

func (t tables) WorkerDelete(ctx context.Context, id string) error {
	return t.Write(ctx, func() error { return t.s.q.WorkerDelete(ctx, t.q, sqlitedb.WorkerDeleteParams{WorkerID: id}) })
}
