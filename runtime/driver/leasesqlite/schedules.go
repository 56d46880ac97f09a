package leasesqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/driver/leasesqlite/internal/sqlitedb"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// Probe reads outside the write lock: WAL readers never wait.
func (s *store) Probe(ctx context.Context, types, schedules []string) (driver.Probe, error) {
	r, err := s.q.TaskProbe(ctx, s.db, sqlitedb.TaskProbeParams{TaskTypes: types, ScheduleNames: schedules})
	if err != nil {
		return driver.Probe{}, fmt.Errorf("leasegen: look for claimable tasks and due schedules: %w", err)
	}
	return driver.Probe{Claimable: r.Claimable, SchedulesDue: r.SchedulesDue}, nil
}

// RegisterSchedules runs in one write transaction, which serializes
// starting workers.
func (s *store) RegisterSchedules(ctx context.Context, defs []driver.ScheduleDef, first func(driver.ScheduleDef, time.Time) time.Time) error {
	return s.immediate(ctx, func(conn *sql.Conn) error {
		nowMs, err := s.q.ScheduleNow(ctx, conn)
		if err != nil {
			return fmt.Errorf("leasegen: read the database's clock: %w", err)
		}
		for _, d := range defs {
			rows, err := s.q.ScheduleGet(ctx, conn, sqlitedb.ScheduleGetParams{Name: d.Name})
			if err != nil {
				return fmt.Errorf("leasegen: read schedule %q: %w", d.Name, err)
			}
			var spec string
			var next time.Time
			if len(rows) > 0 {
				spec, next = rows[0].Spec, fromMillis(rows[0].NextRun)
			}
			err = sqlbuild.RegisterDef(d, fromMillis(nowMs), first, len(rows) > 0, spec, next,
				func(next time.Time) error {
					return s.q.ScheduleInsert(ctx, conn, sqlitedb.ScheduleInsertParams{
						Name: d.Name, TaskType: d.TaskType, Spec: d.Spec, Misfire: d.Misfire, Overlap: d.Overlap,
						Payload: d.Payload, Priority: int64(d.Priority), MaxAttempts: int64(d.MaxAttempts), NextRun: next.UnixMilli(),
					})
				},
				func(next time.Time) error {
					return s.q.ScheduleRedefine(ctx, conn, sqlitedb.ScheduleRedefineParams{
						Name: d.Name, TaskType: d.TaskType, Spec: d.Spec, Misfire: d.Misfire, Overlap: d.Overlap,
						Payload: d.Payload, Priority: int64(d.Priority), MaxAttempts: int64(d.MaxAttempts), NextRun: next.UnixMilli(),
					})
				})
			if err != nil {
				return fmt.Errorf("leasegen: register schedule %q: %w", d.Name, err)
			}
		}
		return nil
	})
}

// FireSchedules runs under the write lock, taken at BEGIN: firing workers
// take turns, and the second finds the schedule moved on.
func (s *store) FireSchedules(ctx context.Context, names []string, plan func(time.Time, []driver.DueSchedule) []driver.ScheduleFire) ([]driver.ScheduleFire, error) {
	var fired []driver.ScheduleFire
	err := s.immediate(ctx, func(conn *sql.Conn) error {
		nowMs, err := s.q.ScheduleNow(ctx, conn)
		if err != nil {
			return fmt.Errorf("leasegen: read the database's clock: %w", err)
		}
		locked, err := s.q.ScheduleLockDue(ctx, conn, sqlitedb.ScheduleLockDueParams{Names: names, Now: nowMs})
		if err != nil {
			return fmt.Errorf("leasegen: read due schedules: %w", err)
		}
		rows := make([]sqlbuild.ScheduleRow, len(locked))
		for i, r := range locked {
			rows[i] = sqlbuild.ScheduleRow{Name: r.Name, TaskType: r.TaskType, Spec: r.Spec, Payload: r.Payload,
				Priority: int(r.Priority), MaxAttempts: int(r.MaxAttempts), NextRun: fromMillis(r.NextRun), LastStatus: sqlbuild.StatusString(r.LastStatus)}
		}
		now := fromMillis(nowMs)
		fired, err = sqlbuild.FireDue(now, rows, plan,
			func(tasks []driver.NewTask) ([]leasetype.TaskID, error) { return s.insertAll(ctx, conn, tasks) },
			func(a sqlbuild.ScheduleAdvance) (bool, error) {
				n, err := s.q.ScheduleAdvance(ctx, conn, sqlitedb.ScheduleAdvanceParams{
					NextRun: a.Fire.Next.UnixMilli(), LastTick: nullMillis(a.LastTick), EnqueuedAt: nullMillis(a.EnqueuedAt),
					LastTaskID: sql.NullInt64{Int64: int64(a.LastTask), Valid: a.LastTask != 0},
					Enqueued:   int64(len(a.Fire.Ticks)), Missed: int64(a.Fire.Missed),
					Name: a.Fire.Name, FromNextRun: a.Fire.From.UnixMilli(),
				})
				return n == 1, err
			})
		return err
	})
	if err != nil {
		return nil, err
	}
	return fired, nil
}

func (s *store) Schedules(ctx context.Context) ([]leasetype.ScheduleInfo, time.Time, error) {
	nowMs, err := s.q.ScheduleNow(ctx, s.db)
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
			Priority: int(r.Priority), MaxAttempts: int(r.MaxAttempts), NextRun: fromMillis(r.NextRun), Paused: r.Paused != 0,
			RegisteredAt: fromMillis(r.RegisteredAt), LastTick: fromNullMillis(r.LastTick), LastEnqueuedAt: fromNullMillis(r.LastEnqueuedAt),
			LastTaskID: leasetype.TaskID(r.LastTaskID.Int64), Ticks: r.Ticks, Missed: r.Missed,
		}
	}
	return out, fromMillis(nowMs), nil
}

func (s *store) SetSchedulePaused(ctx context.Context, name string, paused bool) (bool, error) {
	flag := int64(0)
	if paused {
		flag = 1
	}
	return sqlbuild.SetSchedulePaused(ctx, s.retry, name, paused,
		func() (int64, error) {
			return s.q.ScheduleSetPaused(ctx, s.db, sqlitedb.ScheduleSetPausedParams{Name: name, Paused: flag})
		},
		func() (bool, error) {
			rows, err := s.q.ScheduleGet(ctx, s.db, sqlitedb.ScheduleGetParams{Name: name})
			return len(rows) > 0, err
		})
}

func (s *store) DeleteSchedule(ctx context.Context, name string) (bool, error) {
	var n int64
	err := s.retry(ctx, func() error {
		var err error
		n, err = s.q.ScheduleDelete(ctx, s.db, sqlitedb.ScheduleDeleteParams{Name: name})
		return err
	})
	if err != nil {
		return false, fmt.Errorf("leasegen: delete schedule %q: %w", name, err)
	}
	return n > 0, nil
}

func nullMillis(t time.Time) sql.NullInt64 {
	return sql.NullInt64{Int64: t.UnixMilli(), Valid: !t.IsZero()}
}
