package leasemysql

import (
	"context"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/driver/leasemysql/internal/mysqldb"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// WorkerLockRegistry locks leasegen_limits' registry row: a row that does
// not exist yet has nothing to lock in READ COMMITTED.
func (t tables) WorkerLockRegistry(ctx context.Context) error {
	if !t.Writes.InTx {
		return nil
	}
	return t.s.q.WorkerLockRegistry(ctx, t.q)
}

func (t tables) WorkerDeleteExpired(ctx context.Context) error {
	return t.Write(ctx, func() error { return t.s.q.WorkerDeleteExpired(ctx, t.q) })
}

func (t tables) WorkerListLive(ctx context.Context) ([]leasetype.WorkerInfo, error) {
	rows, err := t.s.q.WorkerListLive(ctx, t.q)
	return sqlbuild.Map(rows, func(r mysqldb.LeasegenWorker) leasetype.WorkerInfo {
		return leasetype.WorkerInfo{
			ID: r.WorkerID, Host: r.Host, PID: int(r.Pid), StartedAt: r.StartedAt, AliveUntil: r.AliveUntil,
			MaxConcurrency: int(r.MaxConcurrency), GlobalLimit: int(r.GlobalLimit), TaskLimits: sqlbuild.DecodeLimits(r.TaskLimits),
			Schedules: sqlbuild.DecodeNames(r.Schedules),
		}
	}), err
}

func (t tables) WorkerInsert(ctx context.Context, r driver.WorkerRegistration) (bool, error) {
	return t.Changed(ctx, func() (int64, error) {
		return t.s.q.WorkerInsert(ctx, t.q, mysqldb.WorkerInsertParams{
			WorkerID: r.ID, Host: r.Host, Pid: int32(r.PID), TtlUs: micros(r.TTL),
			MaxConcurrency: int32(r.MaxConcurrency), GlobalLimit: int32(r.GlobalLimit), TaskLimits: sqlbuild.EncodeLimits(r.TaskLimits),
			Schedules: sqlbuild.EncodeNames(r.Schedules),
		})
	})
}

// WorkerRenew asks whether the row exists when the update changed none:
// MySQL counts changed rows, and a renewal within the millisecond of the
// last one changes nothing.
func (t tables) WorkerRenew(ctx context.Context, id string, ttl time.Duration) (bool, error) {
	changed, err := t.Changed(ctx, func() (int64, error) {
		return t.s.q.WorkerRenew(ctx, t.q, mysqldb.WorkerRenewParams{TtlUs: micros(ttl), WorkerID: id})
	})
	if err != nil || changed {
		return changed, err
	}
	n, err := t.s.q.WorkerExists(ctx, t.q, mysqldb.WorkerExistsParams{WorkerID: id})
	return n > 0, err
}

func (t tables) WorkerDelete(ctx context.Context, id string) error {
	return t.Write(ctx, func() error { return t.s.q.WorkerDelete(ctx, t.q, mysqldb.WorkerDeleteParams{WorkerID: id}) })
}
