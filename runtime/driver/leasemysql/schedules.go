package leasemysql

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/driver/leasemysql/internal/mysqldb"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

func (s *store) Probe(ctx context.Context, types, schedules []string) (driver.Probe, error) {
	r, err := s.q.TaskProbe(ctx, s.db, mysqldb.TaskProbeParams{TaskTypes: types, ScheduleNames: schedules})
	if err != nil {
		return driver.Probe{}, fmt.Errorf("leasegen: look for claimable tasks and due schedules: %w", err)
	}
	return driver.Probe{Claimable: r.Claimable, SchedulesDue: r.SchedulesDue}, nil
}

// RegisterSchedules takes the worker registry's lock, so that two workers
// that start at once register one after the other (a row that does not
// exist yet has nothing to lock in READ COMMITTED).
func (s *store) RegisterSchedules(ctx context.Context, defs []driver.ScheduleDef, first func(driver.ScheduleDef, time.Time) time.Time) error {
	return s.retry(ctx, func() error {
		return s.boundedTx(ctx, claimSessionIdle, func(tx mysqldb.DBTX) error {
			if err := s.q.WorkerLockRegistry(ctx, tx); err != nil {
				return fmt.Errorf("leasegen: lock the worker registry: %w", err)
			}
			now, err := s.q.ScheduleNow(ctx, tx)
			if err != nil {
				return fmt.Errorf("leasegen: read the database's clock: %w", err)
			}
			for _, d := range defs {
				rows, err := s.q.ScheduleGet(ctx, tx, mysqldb.ScheduleGetParams{Name: d.Name})
				if err != nil {
					return fmt.Errorf("leasegen: read schedule %q: %w", d.Name, err)
				}
				var spec string
				var next time.Time
				if len(rows) > 0 {
					spec, next = rows[0].Spec, rows[0].NextRun
				}
				err = sqlbuild.RegisterDef(d, now, first, len(rows) > 0, spec, next,
					func(next time.Time) error {
						return s.q.ScheduleInsert(ctx, tx, mysqldb.ScheduleInsertParams{
							Name: d.Name, TaskType: d.TaskType, Spec: d.Spec, Misfire: d.Misfire, Overlap: d.Overlap,
							Payload: d.Payload, Priority: int32(d.Priority), MaxAttempts: int32(d.MaxAttempts), NextRun: next,
						})
					},
					func(next time.Time) error {
						return s.q.ScheduleRedefine(ctx, tx, mysqldb.ScheduleRedefineParams{
							Name: d.Name, TaskType: d.TaskType, Spec: d.Spec, Misfire: d.Misfire, Overlap: d.Overlap,
							Payload: d.Payload, Priority: int32(d.Priority), MaxAttempts: int32(d.MaxAttempts), NextRun: next,
						})
					})
				if err != nil {
					return fmt.Errorf("leasegen: register schedule %q: %w", d.Name, err)
				}
			}
			return nil
		})
	})
}

func (s *store) FireSchedules(ctx context.Context, names []string, plan func(time.Time, []driver.DueSchedule) []driver.ScheduleFire) ([]driver.ScheduleFire, error) {
	var fired []driver.ScheduleFire
	err := s.retry(ctx, func() error {
		return s.boundedTx(ctx, claimSessionIdle, func(tx mysqldb.DBTX) error {
			now, err := s.q.ScheduleNow(ctx, tx)
			if err != nil {
				return fmt.Errorf("leasegen: read the database's clock: %w", err)
			}
			locked, err := s.q.ScheduleLockDue(ctx, tx, mysqldb.ScheduleLockDueParams{Names: names, Now: now})
			if err != nil {
				return fmt.Errorf("leasegen: lock due schedules: %w", err)
			}
			rows := make([]sqlbuild.ScheduleRow, len(locked))
			for i, r := range locked {
				rows[i] = sqlbuild.ScheduleRow{Name: r.Name, TaskType: r.TaskType, Spec: r.Spec, Payload: r.Payload,
					Priority: int(r.Priority), MaxAttempts: int(r.MaxAttempts), NextRun: r.NextRun, LastStatus: sqlbuild.StatusString(r.LastStatus)}
			}
			fired, err = sqlbuild.FireDue(now, rows, plan,
				func(tasks []driver.NewTask) ([]leasetype.TaskID, error) { return s.Insert(ctx, tx, tasks) },
				func(a sqlbuild.ScheduleAdvance) (bool, error) {
					n, err := s.q.ScheduleAdvance(ctx, tx, mysqldb.ScheduleAdvanceParams{
						NextRun: a.Fire.Next, LastTick: nullTime(a.LastTick), EnqueuedAt: nullTime(a.EnqueuedAt),
						LastTaskID: nullID(a.LastTask), Enqueued: int64(len(a.Fire.Ticks)), Missed: int64(a.Fire.Missed),
						Name: a.Fire.Name, FromNextRun: a.Fire.From,
					})
					return n == 1, err
				})
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	return fired, nil
}

func (s *store) Schedules(ctx context.Context) ([]leasetype.ScheduleInfo, time.Time, error) {
	now, err := s.q.ScheduleNow(ctx, s.db)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("leasegen: read the database's clock: %w", err)
	}
	rows, err := s.q.ScheduleList(ctx, s.db)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("leasegen: list schedules: %w", err)
	}
	out := make([]leasetype.ScheduleInfo, len(rows))
	for i, r := range rows {
		out[i] = leasetype.ScheduleInfo{
			Name: r.Name, TaskType: r.TaskType, Spec: r.Spec, Misfire: r.Misfire, Overlap: r.Overlap, Payload: r.Payload,
			Priority: int(r.Priority), MaxAttempts: int(r.MaxAttempts), NextRun: r.NextRun, Paused: r.Paused,
			RegisteredAt: r.RegisteredAt, LastTick: r.LastTick.Time, LastEnqueuedAt: r.LastEnqueuedAt.Time,
			LastTaskID: leasetype.TaskID(r.LastTaskID.Int64), Ticks: r.Ticks, Missed: r.Missed,
		}
	}
	return out, now, nil
}

func (s *store) SetSchedulePaused(ctx context.Context, name string, paused bool) (bool, error) {
	return sqlbuild.SetSchedulePaused(ctx, s.retry, name, paused,
		func() (int64, error) {
			return s.q.ScheduleSetPaused(ctx, s.db, mysqldb.ScheduleSetPausedParams{Name: name, Paused: paused})
		},
		func() (bool, error) {
			rows, err := s.q.ScheduleGet(ctx, s.db, mysqldb.ScheduleGetParams{Name: name})
			return len(rows) > 0, err
		})
}

func (s *store) DeleteSchedule(ctx context.Context, name string) (bool, error) {
	n, err := s.q.ScheduleDelete(ctx, s.db, mysqldb.ScheduleDeleteParams{Name: name})
	if err != nil {
		return false, fmt.Errorf("leasegen: delete schedule %q: %w", name, err)
	}
	return n > 0, nil
}

func nullTime(t time.Time) sql.NullTime { return sql.NullTime{Time: t, Valid: !t.IsZero()} }

func nullID(id leasetype.TaskID) sql.NullInt64 {
	return sql.NullInt64{Int64: int64(id), Valid: id != 0}
}
