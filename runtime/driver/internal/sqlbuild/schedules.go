package sqlbuild

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// ScheduleRow is a locked due schedule, as an engine reads it.
type ScheduleRow struct {
	Name, TaskType, Spec string
	Payload              []byte
	Priority             int
	MaxAttempts          int
	NextRun              time.Time
	LastStatus           string // "" when no tick's task is stored
}

// ScheduleAdvance is one fire's update of its schedule's row.
type ScheduleAdvance struct {
	Fire       driver.ScheduleFire
	LastTick   time.Time // zero: no tick enqueued
	EnqueuedAt time.Time // zero: none
	LastTask   leasetype.TaskID
}

// FireDue does the part of FireSchedules that every engine shares, inside
// the engine's transaction: it plans rows' ticks at now, inserts their
// tasks with insert and moves each schedule on with advance, which
// reports whether its fence held. A fence that fails is an error: the
// engine's lock should have made it impossible, and the transaction must
// roll back.
func FireDue(now time.Time, rows []ScheduleRow,
	plan func(now time.Time, due []driver.DueSchedule) []driver.ScheduleFire,
	insert func([]driver.NewTask) ([]leasetype.TaskID, error),
	advance func(ScheduleAdvance) (bool, error),
) ([]driver.ScheduleFire, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	byName := make(map[string]ScheduleRow, len(rows))
	due := make([]driver.DueSchedule, len(rows))
	for i, r := range rows {
		byName[r.Name] = r
		due[i] = driver.DueSchedule{Name: r.Name, Spec: r.Spec, NextRun: r.NextRun, LastTaskActive: activeStatus(r.LastStatus)}
	}
	fires := plan(now, due)
	for i := range fires {
		f := &fires[i]
		r, ok := byName[f.Name]
		if !ok || !f.From.Equal(r.NextRun) {
			return nil, fmt.Errorf("leasegen: schedule %q: a fire planned from a row it did not lock", f.Name)
		}
		a := ScheduleAdvance{Fire: *f}
		if len(f.Ticks) > 0 {
			ids, err := insert(tickTasks(r, f.Ticks))
			if err != nil {
				return nil, fmt.Errorf("leasegen: enqueue schedule %q's ticks: %w", f.Name, err)
			}
			f.IDs = ids
			a.LastTick, a.EnqueuedAt, a.LastTask = f.Ticks[len(f.Ticks)-1], now, ids[len(ids)-1]
		}
		ok, err := advance(a)
		if err != nil {
			return nil, fmt.Errorf("leasegen: advance schedule %q: %w", f.Name, err)
		}
		if !ok {
			return nil, fmt.Errorf("leasegen: schedule %q's next run moved while it was locked", f.Name)
		}
	}
	return fires, nil
}

func activeStatus(s string) bool {
	switch leasetype.Status(s) {
	case leasetype.StatusQueued, leasetype.StatusRunning, leasetype.StatusCancelRequested:
		return true
	}
	return false
}

// tickTasks are the tasks of r's ticks.
func tickTasks(r ScheduleRow, ticks []time.Time) []driver.NewTask {
	tasks := make([]driver.NewTask, len(ticks))
	for i, tick := range ticks {
		tasks[i] = driver.NewTask{
			Type: r.TaskType, Payload: r.Payload, Priority: r.Priority, MaxAttempts: r.MaxAttempts,
			Key: driver.TickKey(r.Name, tick),
			Metadata: leasetype.EncodeMetadata(map[string]string{
				driver.MetadataSchedule: r.Name, driver.MetadataTick: tick.UTC().Format(time.RFC3339Nano),
			}),
		}
	}
	return tasks
}

// StatusString reads a status column a driver scans without a type (a
// scalar subquery's): nil, string or bytes.
func StatusString(v any) string {
	switch s := v.(type) {
	case string:
		return s
	case []byte:
		return string(s)
	}
	return ""
}

// RegisterDef does the part of RegisterSchedules that every engine
// shares, for one def: with the stored row's spec and next run (found
// false when there is none), it calls insert with a new schedule's first
// run, or redefine with the next run to keep.
func RegisterDef(def driver.ScheduleDef, now time.Time, first func(driver.ScheduleDef, time.Time) time.Time,
	found bool, storedSpec string, storedNext time.Time,
	insert func(next time.Time) error, redefine func(next time.Time) error,
) error {
	if !found {
		return insert(first(def, now))
	}
	next := storedNext
	if storedSpec != def.Spec {
		next = first(def, now)
	}
	return redefine(next)
}

// EncodeNames is a worker's schedule names as the schedules column holds
// them: NULL for none.
func EncodeNames(names []string) sql.NullString {
	if len(names) == 0 {
		return sql.NullString{}
	}
	b, _ := json.Marshal(names) // strings always encode
	return sql.NullString{String: string(b), Valid: true}
}

// DecodeNames reads the schedules column.
func DecodeNames(s sql.NullString) []string {
	if !s.Valid {
		return nil
	}
	var names []string
	_ = json.Unmarshal([]byte(s.String), &names) // a value no worker wrote reads as none
	return names
}

// SetSchedulePaused runs an engine's pause or resume statement, set (which
// reports the rows it changed), and when it changed none, exists, to tell
// a schedule already in that state from one that is not stored.
func SetSchedulePaused(ctx context.Context, retry func(context.Context, func() error) error, name string, paused bool,
	set func() (int64, error), exists func() (bool, error)) (bool, error) {
	var n int64
	found := true
	err := retry(ctx, func() error {
		var err error
		if n, err = set(); err != nil || n > 0 {
			return err
		}
		found, err = exists()
		return err
	})
	if err != nil {
		return false, fmt.Errorf("leasegen: pause or resume schedule %q: %w", name, err)
	}
	if !found {
		return false, fmt.Errorf("%w: %q", leasetype.ErrScheduleNotFound, name)
	}
	return n > 0, nil
}
