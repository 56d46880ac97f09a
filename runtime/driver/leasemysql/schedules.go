package leasemysql

import (
	"context"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/driver/leasemysql/internal/mysqldb"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

func (t tables) ScheduleGet(ctx context.Context, name string) (driver.StoredSchedule, bool, error) {
	rows, err := t.s.q.ScheduleGet(ctx, t.q, mysqldb.ScheduleGetParams{Name: name})
	if err != nil || len(rows) == 0 {
		return driver.StoredSchedule{}, false, err
	}
	return driver.StoredSchedule{Spec: rows[0].Spec, NextRun: rows[0].NextRun}, true, nil
}

func (t tables) ScheduleInsert(ctx context.Context, d driver.ScheduleDef, next time.Time) error {
	return t.Write(ctx, func() error {
		return t.s.q.ScheduleInsert(ctx, t.q, mysqldb.ScheduleInsertParams{
			Name: d.Name, TaskType: d.TaskType, Spec: d.Spec, Misfire: d.Misfire, Overlap: d.Overlap,
			Payload: d.Payload, Priority: int32(d.Priority), MaxAttempts: int32(d.MaxAttempts), NextRun: next,
		})
	})
}

func (t tables) ScheduleRedefine(ctx context.Context, d driver.ScheduleDef, next time.Time) error {
	return t.Write(ctx, func() error {
		return t.s.q.ScheduleRedefine(ctx, t.q, mysqldb.ScheduleRedefineParams{
			Name: d.Name, TaskType: d.TaskType, Spec: d.Spec, Misfire: d.Misfire, Overlap: d.Overlap,
			Payload: d.Payload, Priority: int32(d.Priority), MaxAttempts: int32(d.MaxAttempts), NextRun: next,
		})
	})
}

func (t tables) ScheduleLockDue(ctx context.Context, names []string, now time.Time) ([]driver.LockedSchedule, error) {
	rows, err := t.s.q.ScheduleLockDue(ctx, t.q, mysqldb.ScheduleLockDueParams{Names: names, Now: now})
	return sqlbuild.Map(rows, func(r mysqldb.ScheduleLockDueRow) driver.LockedSchedule {
		return driver.LockedSchedule{Name: r.Name, TaskType: r.TaskType, Spec: r.Spec, Payload: r.Payload,
			Priority: int(r.Priority), MaxAttempts: int(r.MaxAttempts), NextRun: r.NextRun, LastStatus: sqlbuild.StatusOf(r.LastStatus)}
	}), err
}

func (t tables) ScheduleAdvance(ctx context.Context, a driver.ScheduleAdvance) (bool, error) {
	return t.Changed(ctx, func() (int64, error) {
		return t.s.q.ScheduleAdvance(ctx, t.q, mysqldb.ScheduleAdvanceParams{
			NextRun: a.Next, LastTick: sqlbuild.NullTime(a.LastTick), EnqueuedAt: sqlbuild.NullTime(a.EnqueuedAt),
			LastTaskID: nullID(a.LastTask), Enqueued: int64(a.Enqueued), Missed: int64(a.Missed),
			Name: a.Name, FromNextRun: a.From,
		})
	})
}

func (t tables) ScheduleList(ctx context.Context) ([]leasetype.ScheduleInfo, error) {
	rows, err := t.s.q.ScheduleList(ctx, t.q)
	return sqlbuild.Map(rows, func(r mysqldb.LeasegenSchedule) leasetype.ScheduleInfo {
		return leasetype.ScheduleInfo{
			Name: r.Name, TaskType: r.TaskType, Spec: r.Spec, Misfire: r.Misfire, Overlap: r.Overlap, Payload: r.Payload,
			Priority: int(r.Priority), MaxAttempts: int(r.MaxAttempts), NextRun: r.NextRun, Paused: r.Paused,
			RegisteredAt: r.RegisteredAt, LastTick: r.LastTick.Time, LastEnqueuedAt: r.LastEnqueuedAt.Time,
			LastTaskID: leasetype.TaskID(r.LastTaskID.Int64), Ticks: r.Ticks, Missed: r.Missed,
		}
	}), err
}

func (t tables) ScheduleSetPaused(ctx context.Context, name string, paused bool) (bool, error) {
	return t.Changed(ctx, func() (int64, error) {
		return t.s.q.ScheduleSetPaused(ctx, t.q, mysqldb.ScheduleSetPausedParams{Name: name, Paused: paused})
	})
}

func (t tables) ScheduleDelete(ctx context.Context, name string) (bool, error) {
	return t.Changed(ctx, func() (int64, error) {
		return t.s.q.ScheduleDelete(ctx, t.q, mysqldb.ScheduleDeleteParams{Name: name})
	})
}
