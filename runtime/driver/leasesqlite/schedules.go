package leasesqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/driver/leasesqlite/internal/sqlitedb"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

func (t tables) ScheduleGet(ctx context.Context, name string) (driver.StoredSchedule, bool, error) {
	rows, err := t.s.q.ScheduleGet(ctx, t.q, sqlitedb.ScheduleGetParams{Name: name})
	if err != nil || len(rows) == 0 {
		return driver.StoredSchedule{}, false, err
	}
	return driver.StoredSchedule{Spec: rows[0].Spec, NextRun: fromMillis(rows[0].NextRun)}, true, nil
}

func (t tables) ScheduleInsert(ctx context.Context, d driver.ScheduleDef, next time.Time) error {
	return t.Write(ctx, func() error {
		return t.s.q.ScheduleInsert(ctx, t.q, sqlitedb.ScheduleInsertParams{
			Name: d.Name, TaskType: d.TaskType, Spec: d.Spec, Misfire: d.Misfire, Overlap: d.Overlap,
			Payload: d.Payload, Priority: int64(d.Priority), MaxAttempts: int64(d.MaxAttempts), NextRun: next.UnixMilli(),
		})
	})
}

func (t tables) ScheduleRedefine(ctx context.Context, d driver.ScheduleDef, next time.Time) error {
	return t.Write(ctx, func() error {
		return t.s.q.ScheduleRedefine(ctx, t.q, sqlitedb.ScheduleRedefineParams{
			Name: d.Name, TaskType: d.TaskType, Spec: d.Spec, Misfire: d.Misfire, Overlap: d.Overlap,
			Payload: d.Payload, Priority: int64(d.Priority), MaxAttempts: int64(d.MaxAttempts), NextRun: next.UnixMilli(),
		})
	})
}

func (t tables) ScheduleLockDue(ctx context.Context, names []string, now time.Time) ([]driver.LockedSchedule, error) {
	rows, err := t.s.q.ScheduleLockDue(ctx, t.q, sqlitedb.ScheduleLockDueParams{Names: names, Now: now.UnixMilli()})
	return sqlbuild.Map(rows, func(r sqlitedb.ScheduleLockDueRow) driver.LockedSchedule {
		return driver.LockedSchedule{Name: r.Name, TaskType: r.TaskType, Spec: r.Spec, Payload: r.Payload,
			Priority: int(r.Priority), MaxAttempts: int(r.MaxAttempts), NextRun: fromMillis(r.NextRun), LastStatus: sqlbuild.StatusOf(r.LastStatus)}
	}), err
}

func (t tables) ScheduleAdvance(ctx context.Context, a driver.ScheduleAdvance) (bool, error) {
	return t.Changed(ctx, func() (int64, error) {
		return t.s.q.ScheduleAdvance(ctx, t.q, sqlitedb.ScheduleAdvanceParams{
			NextRun: a.Next.UnixMilli(), LastTick: nullMillis(a.LastTick), EnqueuedAt: nullMillis(a.EnqueuedAt),
			LastTaskID: sql.NullInt64{Int64: int64(a.LastTask), Valid: a.LastTask != 0}, Enqueued: int64(a.Enqueued), Missed: int64(a.Missed),
			Name: a.Name, FromNextRun: a.From.UnixMilli(),
		})
	})
}

func (t tables) ScheduleList(ctx context.Context) ([]leasetype.ScheduleInfo, error) {
	rows, err := t.s.q.ScheduleList(ctx, t.q)
	return sqlbuild.Map(rows, func(r sqlitedb.LeasegenSchedule) leasetype.ScheduleInfo {
		return leasetype.ScheduleInfo{
			Name: r.Name, TaskType: r.TaskType, Spec: r.Spec, Misfire: r.Misfire, Overlap: r.Overlap, Payload: r.Payload,
			Priority: int(r.Priority), MaxAttempts: int(r.MaxAttempts), NextRun: fromMillis(r.NextRun), Paused: r.Paused != 0,
			RegisteredAt: fromMillis(r.RegisteredAt), LastTick: fromNullMillis(r.LastTick), LastEnqueuedAt: fromNullMillis(r.LastEnqueuedAt),
			LastTaskID: leasetype.TaskID(r.LastTaskID.Int64), Ticks: r.Ticks, Missed: r.Missed,
		}
	}), err
}

func (t tables) ScheduleSetPaused(ctx context.Context, name string, paused bool) (bool, error) {
	flag := int64(0)
	if paused {
		flag = 1
	}
	return t.Changed(ctx, func() (int64, error) {
		return t.s.q.ScheduleSetPaused(ctx, t.q, sqlitedb.ScheduleSetPausedParams{Name: name, Paused: flag})
	})
}

func (t tables) ScheduleDelete(ctx context.Context, name string) (bool, error) {
	return t.Changed(ctx, func() (int64, error) {
		return t.s.q.ScheduleDelete(ctx, t.q, sqlitedb.ScheduleDeleteParams{Name: name})
	})
}
