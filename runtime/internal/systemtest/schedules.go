package systemtest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/internal/testwait"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/driver/drivertest"
	"github.com/leasegen/leasegen/runtime/internal/bookkeeping"
)

// A worker with an every-second schedule enqueues its ticks and runs
// them, each once, with the tick in the task and no tick skipped; the
// schedule lists the worker; with overlap=skip, a task that outlasts the
// interval drops the ticks due while it runs, and two of its tasks never
// run at once. The case waits for the workers' reports of fires, not for
// a span of time.
func testWorkerFiresSchedule(t *testing.T, b *Bundle) {
	var mu sync.Mutex
	ticks := map[time.Time]int{}
	handler := func(ctx context.Context, task *runtime.Task) error {
		name, tick, ok := runtime.TickOf(task)
		if !ok || name != "beat" {
			t.Errorf("task %d: TickOf = %q, %v, %v", task.ID, name, tick, ok)
		}
		mu.Lock()
		ticks[tick]++
		mu.Unlock()
		return nil
	}
	w := b.StartWorker(t, Config(), map[string]runtime.HandlerFunc{"beat": handler},
		runtime.WithSchedule(runtime.Periodic{Every: time.Second}))
	var running, overlapped atomic.Int32
	slow := b.StartWorker(t, Config(), map[string]runtime.HandlerFunc{"slow": func(ctx context.Context, _ *runtime.Task) error {
		if running.Add(1) > 1 {
			overlapped.Add(1)
		}
		defer running.Add(-1)
		time.Sleep(2500 * time.Millisecond)
		return nil
	}}, runtime.WithSchedule(runtime.Periodic{Every: time.Second, SkipOverlap: true}))
	const want = 4
	b.Signals.Await(t, time.Minute, func() bool {
		return b.Signals.Finished("beat") >= want && b.Signals.Fired("slow").Overlapped >= 2
	}, func() string {
		return fmt.Sprintf("%d beat tasks finished and %+v fired for slow; want %d, and 2 ticks dropped for overlap", b.Signals.Finished("beat"), b.Signals.Fired("slow"), want)
	})

	mu.Lock()
	got := slices.SortedFunc(maps.Keys(ticks), time.Time.Compare)
	for _, tick := range got {
		if n := ticks[tick]; n != 1 || tick.Truncate(time.Second) != tick {
			t.Errorf("tick %v ran %d times", tick, n)
		}
	}
	mu.Unlock()
	if span := got[len(got)-1].Sub(got[0]); span != time.Duration(len(got)-1)*time.Second {
		t.Errorf("%d ticks span %v: a tick of an every-second schedule was skipped", len(got), span)
	}
	// A schedule lists the live workers that fire it: a worker whose row
	// a stalled renewal let lapse is listed again once it renews.
	var beat, sl runtime.ScheduleInfo
	b.Signals.Await(t, testwait.Bound, func() bool {
		beat, sl = scheduleNamed(t, b.Client, "beat"), scheduleNamed(t, b.Client, "slow")
		return slices.Equal(beat.Workers, []string{w.ID()}) && slices.Equal(sl.Workers, []string{slow.ID()})
	}, func() string {
		return fmt.Sprintf("schedules beat and slow list workers %v and %v, want %s and %s", beat.Workers, sl.Workers, w.ID(), slow.ID())
	})
	if beat.TaskType != "beat" || beat.Spec != "every 1s" || beat.Missed != 0 {
		t.Errorf("schedule beat = %+v; want no misses", beat)
	}
	if s := w.Stats(); s.Ticks < int64(len(got)) {
		t.Errorf("worker Stats().Ticks = %d, want at least %d", s.Ticks, len(got))
	}
	if sl.Ticks < 1 || sl.Missed < 2 || sl.Overlap != "skip" {
		t.Errorf("overlap=skip schedule with a 2.5 s task = %d ticks, %d missed; want a tick and at least 2 missed", sl.Ticks, sl.Missed)
	}
	if n := overlapped.Load(); n > 0 {
		t.Errorf("overlap=skip: %d tasks started while another ran", n)
	}
}

// Registering again keeps the next run while the spec is the same and
// recomputes it when it changed; a paused schedule stays paused through a
// registration and is never due; Resume makes it due; deleting removes
// it; an unknown name is ErrScheduleNotFound.
func testScheduleRedefinePauseDelete(t *testing.T, b *Bundle) {
	def := drivertest.TickDef("r", "every 1s")
	dbtest.Must(t, "register", bookkeeping.RegisterSchedules(bg, b.Driver.Tables(), []driver.ScheduleDef{def}, drivertest.SecondsBefore(5)))
	first := scheduleNamed(t, b.Client, "r").NextRun
	def.Payload = []byte(`{"n":2}`)
	dbtest.Must(t, "register again", bookkeeping.RegisterSchedules(bg, b.Driver.Tables(), []driver.ScheduleDef{def}, drivertest.SecondsBefore(50)))
	if s := scheduleNamed(t, b.Client, "r"); !s.NextRun.Equal(first) || string(s.Payload) != `{"n":2}` {
		t.Errorf("same spec again: next run %v (want %v kept), payload %s (want the new one)", s.NextRun, first, s.Payload)
	}
	def.Spec = "every 2s"
	dbtest.Must(t, "register a changed spec", bookkeeping.RegisterSchedules(bg, b.Driver.Tables(), []driver.ScheduleDef{def}, drivertest.SecondsBefore(-60)))
	if s := scheduleNamed(t, b.Client, "r"); s.Spec != "every 2s" || !s.NextRun.After(first.Add(time.Minute)) {
		t.Errorf("changed spec: %q next run %v; want every 2s, recomputed a minute ahead", s.Spec, s.NextRun)
	}
	dbtest.Must(t, "register due", bookkeeping.RegisterSchedules(bg, b.Driver.Tables(), []driver.ScheduleDef{drivertest.TickDef("p", "every 1s")}, drivertest.SecondsBefore(1)))
	dbtest.Must(t, "pause", b.Client.PauseSchedule(bg, "p"))
	dbtest.Must(t, "pause again", b.Client.PauseSchedule(bg, "p"))
	dbtest.Must(t, "register while paused", bookkeeping.RegisterSchedules(bg, b.Driver.Tables(), []driver.ScheduleDef{drivertest.TickDef("p", "every 1s")}, drivertest.SecondsBefore(1)))
	if p, err := b.Driver.Probe(bg, nil, []string{"p"}); err != nil || p.SchedulesDue {
		t.Errorf("Probe(p) while paused = %+v, %v; want nothing due", p, err)
	}
	if fired, err := bookkeeping.FireSchedules(bg, b.Driver.Tables(), []string{"p"}, drivertest.EverySecond); err != nil || len(fired) != 0 {
		t.Errorf("fire while paused = %+v, %v; want nothing", fired, err)
	}
	if s := scheduleNamed(t, b.Client, "p"); !s.Paused || s.Overdue != 0 {
		t.Errorf("paused schedule listed as %+v", s)
	}
	dbtest.Must(t, "resume", b.Client.ResumeSchedule(bg, "p"))
	if p, err := b.Driver.Probe(bg, nil, []string{"p"}); err != nil || !p.SchedulesDue {
		t.Errorf("Probe(p) after resume = %+v, %v; want due", p, err)
	}
	if s := scheduleNamed(t, b.Client, "p"); s.Overdue <= 0 || len(s.Workers) != 0 {
		t.Errorf("a due schedule no worker registers: overdue %s, workers %v; want overdue, none", s.Overdue, s.Workers)
	}
	for _, err := range []error{b.Client.PauseSchedule(bg, "nope"), b.Client.ResumeSchedule(bg, "nope"), b.Client.DeleteSchedule(bg, "nope")} {
		if !errors.Is(err, runtime.ErrScheduleNotFound) {
			t.Errorf("an unknown schedule: err = %v, want ErrScheduleNotFound", err)
		}
	}
	if _, err := b.Client.TriggerSchedule(bg, "nope"); !errors.Is(err, runtime.ErrScheduleNotFound) {
		t.Errorf("trigger of an unknown schedule: err = %v, want ErrScheduleNotFound", err)
	}
	id, err := b.Client.TriggerSchedule(bg, "p")
	dbtest.Must(t, "trigger", err)
	if info, err := b.Client.Get(bg, id); err != nil || info.Type != "tick" || info.Metadata[bookkeeping.MetadataSchedule] != "p" || info.IdempotencyKey != "" {
		t.Errorf("triggered task = %+v, %v", info, err)
	}
	dbtest.Must(t, "delete", b.Client.DeleteSchedule(bg, "p"))
	if list, _ := b.Client.Schedules(bg); len(list) != 1 || list[0].Name != "r" {
		t.Errorf("after delete the schedules are %v, want r only", list)
	}
}

func scheduleNamed(t *testing.T, c *runtime.Client, name string) runtime.ScheduleInfo {
	t.Helper()
	list, err := c.Schedules(bg)
	return drivertest.ScheduleNamed(t, list, err, name)
}
