package bookkeeping

import (
	"context"
	"fmt"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// The metadata keys a tick's task carries (Task.Metadata).
const (
	MetadataSchedule = "leasegen.schedule"
	MetadataTick     = "leasegen.tick" // RFC 3339, UTC
)

// TickKey is the idempotency key of schedule name's tick task at tick.
func TickKey(name string, tick time.Time) string {
	return "periodic:" + name + ":" + tick.UTC().Format(time.RFC3339Nano)
}

// DueSchedule is a due schedule a fire locked, as its plan sees it.
type DueSchedule struct {
	Name    string
	Spec    string    // as stored: the last registration's
	NextRun time.Time // the first tick not yet enqueued
	// LastTaskActive says the latest tick's task is still queued or
	// running, for overlap=skip.
	LastTaskActive bool
}

// ScheduleFire is what one fire does to a due schedule.
type ScheduleFire struct {
	Name   string
	From   time.Time   // the next run the fire read: the fence
	Next   time.Time   // the next run after it
	Ticks  []time.Time // the ticks to enqueue, oldest first
	Missed int         // due ticks not enqueued, by the misfire or overlap policy
	// IDs are the tick tasks' ids, in Ticks' order, set by FireSchedules.
	IDs []leasetype.TaskID
}

// RegisterSchedules stores defs in one transaction under the worker
// registry's lock, so that workers that start at once register one after
// the other (a row that does not exist yet has nothing to lock). A new
// schedule's next run is first(def, now), now on the database's clock. A
// stored one takes def's definition and keeps its next run, unless
// def.Spec differs from the stored spec: then first recomputes it. Paused
// schedules stay paused.
func RegisterSchedules(ctx context.Context, t driver.Tables, defs []driver.ScheduleDef, first func(def driver.ScheduleDef, now time.Time) time.Time) error {
	return t.InTx(ctx, func(tx driver.Tables) error {
		if err := tx.WorkerLockRegistry(ctx); err != nil {
			return fmt.Errorf("leasegen: lock the worker registry: %w", err)
		}
		now, err := tx.Now(ctx)
		if err != nil {
			return fmt.Errorf("leasegen: read the database's clock: %w", err)
		}
		for _, d := range defs {
			stored, found, err := tx.ScheduleGet(ctx, d.Name)
			switch {
			case err != nil:
			case !found:
				err = tx.ScheduleInsert(ctx, d, first(d, now))
			case stored.Spec != d.Spec:
				err = tx.ScheduleRedefine(ctx, d, first(d, now))
			default:
				err = tx.ScheduleRedefine(ctx, d, stored.NextRun)
			}
			if err != nil {
				return fmt.Errorf("leasegen: register schedule %q: %w", d.Name, err)
			}
		}
		return nil
	})
}

// FireSchedules runs one transaction: it locks the due, unpaused
// schedules among names, skipping the rows another transaction holds,
// and calls plan with the database's now and them; for each fire plan
// returns, it inserts a task per tick, with the idempotency key
// TickKey(name, tick) and the schedule's payload, and moves the
// schedule's next run to Next, fenced on From, the next run it read. It
// returns the fires that took effect, with their tasks' ids. plan runs
// again when the transaction does (after a conflict).
func FireSchedules(ctx context.Context, t driver.Tables, names []string, plan func(now time.Time, due []DueSchedule) []ScheduleFire) ([]ScheduleFire, error) {
	var fired []ScheduleFire
	err := t.InTx(ctx, func(tx driver.Tables) error {
		now, err := tx.Now(ctx)
		if err != nil {
			return fmt.Errorf("leasegen: read the database's clock: %w", err)
		}
		locked, err := tx.ScheduleLockDue(ctx, names, now)
		if err != nil {
			return fmt.Errorf("leasegen: lock due schedules: %w", err)
		}
		fired, err = fireLocked(ctx, tx, now, locked, plan)
		return err
	})
	if err != nil {
		return nil, err
	}
	return fired, nil
}

// fireLocked plans the locked schedules' ticks at now, inserts their
// tasks and moves each schedule on. A fence that fails is an error: the
// lock should have made it impossible, and the transaction must roll
// back.
func fireLocked(ctx context.Context, tx driver.Tables, now time.Time, locked []driver.LockedSchedule, plan func(time.Time, []DueSchedule) []ScheduleFire) ([]ScheduleFire, error) {
	if len(locked) == 0 {
		return nil, nil
	}
	byName := make(map[string]driver.LockedSchedule, len(locked))
	due := make([]DueSchedule, len(locked))
	for i, r := range locked {
		byName[r.Name] = r
		due[i] = DueSchedule{Name: r.Name, Spec: r.Spec, NextRun: r.NextRun, LastTaskActive: r.LastStatus != "" && !r.LastStatus.Terminal()}
	}
	fires := plan(now, due)
	for i := range fires {
		f := &fires[i]
		r, ok := byName[f.Name]
		if !ok || !f.From.Equal(r.NextRun) {
			return nil, fmt.Errorf("leasegen: schedule %q: a fire planned from a row it did not lock", f.Name)
		}
		a := driver.ScheduleAdvance{Name: f.Name, From: f.From, Next: f.Next, Enqueued: len(f.Ticks), Missed: f.Missed}
		if len(f.Ticks) > 0 {
			ids, err := tx.TaskInsert(ctx, tickTasks(r, f.Ticks))
			if err != nil {
				return nil, fmt.Errorf("leasegen: enqueue schedule %q's ticks: %w", f.Name, err)
			}
			f.IDs = ids
			a.LastTick, a.EnqueuedAt, a.LastTask = f.Ticks[len(f.Ticks)-1], now, ids[len(ids)-1]
		}
		ok, err := tx.ScheduleAdvance(ctx, a)
		if err != nil {
			return nil, fmt.Errorf("leasegen: advance schedule %q: %w", f.Name, err)
		}
		if !ok {
			return nil, fmt.Errorf("leasegen: schedule %q's next run moved while it was locked", f.Name)
		}
	}
	return fires, nil
}

// tickTasks are the tasks of r's ticks.
func tickTasks(r driver.LockedSchedule, ticks []time.Time) []driver.NewTask {
	tasks := make([]driver.NewTask, len(ticks))
	for i, tick := range ticks {
		tasks[i] = driver.NewTask{
			Type: r.TaskType, Payload: r.Payload, Priority: r.Priority, MaxAttempts: r.MaxAttempts,
			Key: TickKey(r.Name, tick),
			Metadata: leasetype.EncodeMetadata(map[string]string{
				MetadataSchedule: r.Name, MetadataTick: tick.UTC().Format(time.RFC3339Nano),
			}),
		}
	}
	return tasks
}

// SetSchedulePaused pauses or resumes schedule name and reports whether
// that changed its state; an error wrapping leasetype.ErrScheduleNotFound
// when none is stored.
func SetSchedulePaused(ctx context.Context, t driver.Tables, name string, paused bool) (bool, error) {
	changed, err := t.ScheduleSetPaused(ctx, name, paused)
	if err == nil && !changed {
		var found bool
		if _, found, err = t.ScheduleGet(ctx, name); err == nil && !found {
			return false, fmt.Errorf("%w: %q", leasetype.ErrScheduleNotFound, name)
		}
	}
	if err != nil {
		return false, fmt.Errorf("leasegen: pause or resume schedule %q: %w", name, err)
	}
	return changed, nil
}

// Schedules lists every stored schedule by name, and the database's now.
func Schedules(ctx context.Context, t driver.Tables) ([]leasetype.ScheduleInfo, time.Time, error) {
	now, err := t.Now(ctx)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("leasegen: read the database's clock: %w", err)
	}
	list, err := t.ScheduleList(ctx)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("leasegen: list schedules: %w", err)
	}
	return list, now, nil
}
