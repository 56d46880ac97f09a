package drivertest

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/internal/bookkeeping"
)

// tickDef is a schedule of task type "tick".
func tickDef(name, spec string) driver.ScheduleDef {
	return driver.ScheduleDef{Name: name, TaskType: "tick", Spec: spec, Misfire: "once", Overlap: "allow",
		Payload: []byte(`{"n":1}`), Priority: 3, MaxAttempts: 4}
}

// secondsBefore is a first-run func whose first tick is n whole seconds
// before the database's now.
func secondsBefore(n int) func(driver.ScheduleDef, time.Time) time.Time {
	return func(_ driver.ScheduleDef, now time.Time) time.Time {
		return now.Truncate(time.Second).Add(-time.Duration(n) * time.Second)
	}
}

// everySecond plans every due second-tick of each schedule up to now.
func everySecond(now time.Time, due []bookkeeping.DueSchedule) []bookkeeping.ScheduleFire {
	var fires []bookkeeping.ScheduleFire
	for _, d := range due {
		f := bookkeeping.ScheduleFire{Name: d.Name, From: d.NextRun}
		t := d.NextRun
		for ; !t.After(now); t = t.Add(time.Second) {
			f.Ticks = append(f.Ticks, t)
		}
		f.Next = t
		fires = append(fires, f)
	}
	return fires
}

// everySecondThenPause plans like everySecond but moves each next run an
// hour on, so a check after the fire sees nothing due however slowly it
// runs.
func everySecondThenPause(now time.Time, due []bookkeeping.DueSchedule) []bookkeeping.ScheduleFire {
	fires := everySecond(now, due)
	for i := range fires {
		fires[i].Next = fires[i].Next.Add(time.Hour)
	}
	return fires
}

func scheduleNamed(t *testing.T, b *Bundle, name string) runtime.ScheduleInfo {
	t.Helper()
	list, err := b.Client.Schedules(bg)
	dbtest.Must(t, "list schedules", err)
	for _, s := range list {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("schedule %q not stored; have %v", name, list)
	return runtime.ScheduleInfo{}
}

// A registered schedule whose first run is due shows in the probe; a fire
// inserts a task per tick, with the tick key, the schedule's payload,
// priority, attempts and the tick metadata, and moves the schedule on;
// then the probe says nothing is due, and a probe for other schedules
// never did.
func testSchedulesRegisterAndFire(t *testing.T, b *Bundle) {
	dbtest.Must(t, "register", bookkeeping.RegisterSchedules(bg, b.Driver.Tables(), []driver.ScheduleDef{tickDef("s1", "every 1s")}, secondsBefore(2)))
	if p, err := b.Driver.Probe(bg, nil, []string{"other"}); err != nil || p.SchedulesDue {
		t.Errorf("Probe(other) = %+v, %v; want nothing due", p, err)
	}
	if p, err := b.Driver.Probe(bg, []string{"tick"}, []string{"s1"}); err != nil || !p.SchedulesDue || p.Claimable {
		t.Fatalf("Probe(s1) = %+v, %v; want s1 due and no task claimable", p, err)
	}
	fired, err := bookkeeping.FireSchedules(bg, b.Driver.Tables(), []string{"s1"}, everySecondThenPause)
	dbtest.Must(t, "fire", err)
	if len(fired) != 1 || len(fired[0].Ticks) < 3 || len(fired[0].IDs) != len(fired[0].Ticks) {
		t.Fatalf("fired %+v, want s1 with 3 or more ticks and their ids", fired)
	}
	f := fired[0]
	for i, id := range f.IDs {
		info, err := b.Client.Get(bg, id)
		dbtest.Must(t, "get tick task", err)
		if info.Type != "tick" || string(info.Payload) != `{"n":1}` || info.Priority != 3 || info.MaxAttempts != 4 ||
			info.IdempotencyKey != bookkeeping.TickKey("s1", f.Ticks[i]) || info.Metadata[bookkeeping.MetadataSchedule] != "s1" ||
			info.Metadata[bookkeeping.MetadataTick] != f.Ticks[i].UTC().Format(time.RFC3339Nano) {
			t.Errorf("tick %d's task = %+v", i, info)
		}
	}
	s := scheduleNamed(t, b, "s1")
	if !s.NextRun.Equal(f.Next) || !s.LastTick.Equal(f.Ticks[len(f.Ticks)-1]) || s.LastTaskID != f.IDs[len(f.IDs)-1] ||
		s.Ticks != int64(len(f.Ticks)) || s.LastEnqueuedAt.IsZero() || s.Spec != "every 1s" || s.Paused {
		t.Errorf("after the fire the schedule is %+v", s)
	}
	if p, err := b.Driver.Probe(bg, []string{"tick"}, []string{"s1"}); err != nil || p.SchedulesDue || !p.Claimable {
		t.Errorf("Probe after the fire = %+v, %v; want the ticks claimable and nothing due", p, err)
	}
	if again, err := bookkeeping.FireSchedules(bg, b.Driver.Tables(), []string{"s1"}, everySecondThenPause); err != nil || len(again) != 0 {
		t.Errorf("a second fire = %+v, %v; want nothing", again, err)
	}
}

// Two engines fire the same due schedule at once: one fire enqueues each
// tick, the other finds it locked or moved on; the schedule's tick count
// equals the tasks stored.
func testScheduleFiresOnceUnderRace(t *testing.T, b *Bundle) {
	dbtest.Must(t, "register", bookkeeping.RegisterSchedules(bg, b.Driver.Tables(), []driver.ScheduleDef{tickDef("race", "every 1s")}, secondsBefore(3)))
	other := b.H.New(b.DB.Open(t))
	runtime.NewEngine(other)
	planned := make(chan struct{})
	var once sync.Once
	slow := func(now time.Time, due []bookkeeping.DueSchedule) []bookkeeping.ScheduleFire {
		once.Do(func() { close(planned) })
		time.Sleep(300 * time.Millisecond) // hold the lock while the other fires
		return everySecond(now, due)
	}
	var wg sync.WaitGroup
	var firstFired []bookkeeping.ScheduleFire
	var firstErr error
	wg.Go(func() {
		firstFired, firstErr = bookkeeping.FireSchedules(bg, b.Driver.Tables(), []string{"race"}, slow)
	})
	<-planned
	secondFired, secondErr := bookkeeping.FireSchedules(bg, other.Tables(), []string{"race"}, everySecond)
	wg.Wait()
	dbtest.Must(t, "first fire", firstErr)
	dbtest.Must(t, "second fire", secondErr)
	ticks := 0
	for _, f := range append(firstFired, secondFired...) {
		ticks += len(f.Ticks)
	}
	tasks := b.DB.Int(t, "SELECT COUNT(*) FROM leasegen_tasks WHERE task_type = 'tick'")
	if s := scheduleNamed(t, b, "race"); tasks < 4 || ticks != tasks || s.Ticks != int64(tasks) {
		t.Errorf("%d ticks fired, %d tasks stored, schedule counts %d; want the same, at least 4", ticks, tasks, s.Ticks)
	}
	if n := b.DB.Int(t, "SELECT COUNT(DISTINCT idempotency_key) FROM leasegen_tasks WHERE task_type = 'tick'"); n != tasks {
		t.Errorf("%d distinct tick keys for %d tasks", n, tasks)
	}
}

// Registering again keeps the next run while the spec is the same and
// recomputes it when it changed; a paused schedule stays paused through a
// registration and is never due; Resume makes it due; deleting removes
// it; an unknown name is ErrScheduleNotFound.
func testScheduleRedefinePauseDelete(t *testing.T, b *Bundle) {
	def := tickDef("r", "every 1s")
	dbtest.Must(t, "register", bookkeeping.RegisterSchedules(bg, b.Driver.Tables(), []driver.ScheduleDef{def}, secondsBefore(5)))
	first := scheduleNamed(t, b, "r").NextRun
	def.Payload = []byte(`{"n":2}`)
	dbtest.Must(t, "register again", bookkeeping.RegisterSchedules(bg, b.Driver.Tables(), []driver.ScheduleDef{def}, secondsBefore(50)))
	if s := scheduleNamed(t, b, "r"); !s.NextRun.Equal(first) || string(s.Payload) != `{"n":2}` {
		t.Errorf("same spec again: next run %v (want %v kept), payload %s (want the new one)", s.NextRun, first, s.Payload)
	}
	def.Spec = "every 2s"
	dbtest.Must(t, "register a changed spec", bookkeeping.RegisterSchedules(bg, b.Driver.Tables(), []driver.ScheduleDef{def}, secondsBefore(-60)))
	if s := scheduleNamed(t, b, "r"); s.Spec != "every 2s" || !s.NextRun.After(first.Add(time.Minute)) {
		t.Errorf("changed spec: %q next run %v; want every 2s, recomputed a minute ahead", s.Spec, s.NextRun)
	}
	dbtest.Must(t, "register due", bookkeeping.RegisterSchedules(bg, b.Driver.Tables(), []driver.ScheduleDef{tickDef("p", "every 1s")}, secondsBefore(1)))
	dbtest.Must(t, "pause", b.Client.PauseSchedule(bg, "p"))
	dbtest.Must(t, "pause again", b.Client.PauseSchedule(bg, "p"))
	dbtest.Must(t, "register while paused", bookkeeping.RegisterSchedules(bg, b.Driver.Tables(), []driver.ScheduleDef{tickDef("p", "every 1s")}, secondsBefore(1)))
	if p, err := b.Driver.Probe(bg, nil, []string{"p"}); err != nil || p.SchedulesDue {
		t.Errorf("Probe(p) while paused = %+v, %v; want nothing due", p, err)
	}
	if fired, err := bookkeeping.FireSchedules(bg, b.Driver.Tables(), []string{"p"}, everySecond); err != nil || len(fired) != 0 {
		t.Errorf("fire while paused = %+v, %v; want nothing", fired, err)
	}
	if s := scheduleNamed(t, b, "p"); !s.Paused || s.Overdue != 0 {
		t.Errorf("paused schedule listed as %+v", s)
	}
	dbtest.Must(t, "resume", b.Client.ResumeSchedule(bg, "p"))
	if p, err := b.Driver.Probe(bg, nil, []string{"p"}); err != nil || !p.SchedulesDue {
		t.Errorf("Probe(p) after resume = %+v, %v; want due", p, err)
	}
	if s := scheduleNamed(t, b, "p"); s.Overdue <= 0 || len(s.Workers) != 0 {
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

// The fire sees whether the latest tick's task is still active, for
// overlap=skip: while it is queued, and no longer once it finished.
func testScheduleSeesLastTaskActive(t *testing.T, b *Bundle) {
	dbtest.Must(t, "register", bookkeeping.RegisterSchedules(bg, b.Driver.Tables(), []driver.ScheduleDef{tickDef("o", "every 1s")}, secondsBefore(0)))
	var seen []bool
	plan := func(now time.Time, due []bookkeeping.DueSchedule) []bookkeeping.ScheduleFire {
		for _, d := range due {
			seen = append(seen, d.LastTaskActive)
		}
		return everySecond(now, due)
	}
	fired, err := bookkeeping.FireSchedules(bg, b.Driver.Tables(), []string{"o"}, plan)
	dbtest.Must(t, "first fire", err)
	waitDue := func() {
		deadline := time.Now().Add(3 * time.Second)
		for {
			p, err := b.Driver.Probe(bg, nil, []string{"o"})
			dbtest.Must(t, "probe", err)
			if p.SchedulesDue {
				return
			}
			if time.Now().After(deadline) {
				t.Fatal("schedule o not due again after 3 s")
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitDue()
	_, err = bookkeeping.FireSchedules(bg, b.Driver.Tables(), []string{"o"}, plan)
	dbtest.Must(t, "second fire", err)
	last := scheduleNamed(t, b, "o").LastTaskID
	claimed := b.Claim(t, "w", 100, "tick")
	for _, c := range claimed {
		ok, err := b.Driver.Complete(bg, b.Engine.DB(), "w", driver.LeaseRef{ID: c.ID, Attempt: c.Attempt}, "")
		dbtest.Must(t, "complete", err)
		if !ok {
			t.Fatalf("completion of %d rejected", c.ID)
		}
	}
	if !slices.ContainsFunc(claimed, func(c driver.ClaimedTask) bool { return c.ID == last }) {
		t.Fatalf("the last tick's task %d was not claimed (%d claimed)", last, len(claimed))
	}
	waitDue()
	_, err = bookkeeping.FireSchedules(bg, b.Driver.Tables(), []string{"o"}, plan)
	dbtest.Must(t, "third fire", err)
	if !slices.Equal(seen, []bool{false, true, false}) || len(fired) != 1 {
		t.Errorf("LastTaskActive over three fires = %v, want [false true false]", seen)
	}
}

// A worker with an every-second schedule enqueues its ticks and runs
// them, with the tick in the task; the schedule lists the worker; with
// overlap=skip, a task that outlasts the interval drops the ticks due
// while it runs.
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
	slow := b.StartWorker(t, Config(), map[string]runtime.HandlerFunc{"slow": func(ctx context.Context, _ *runtime.Task) error {
		time.Sleep(2500 * time.Millisecond)
		return nil
	}}, runtime.WithSchedule(runtime.Periodic{Every: time.Second, SkipOverlap: true}))
	time.Sleep(5500 * time.Millisecond)

	mu.Lock()
	got := len(ticks)
	for tick, n := range ticks {
		if n != 1 || tick.Truncate(time.Second) != tick {
			t.Errorf("tick %v ran %d times", tick, n)
		}
	}
	mu.Unlock()
	if got < 4 || got > 7 {
		t.Errorf("%d ticks ran in 5.5 s of an every-second schedule", got)
	}
	beat := scheduleNamed(t, b, "beat")
	if !slices.Equal(beat.Workers, []string{w.ID()}) || beat.TaskType != "beat" || beat.Spec != "every 1s" || beat.Missed != 0 {
		t.Errorf("schedule beat = %+v; want worker %s, no misses", beat, w.ID())
	}
	if s := w.Stats(); s.Ticks < int64(got) {
		t.Errorf("worker Stats().Ticks = %d, want at least %d", s.Ticks, got)
	}
	sl := scheduleNamed(t, b, "slow")
	if sl.Ticks < 1 || sl.Ticks > 3 || sl.Missed < 2 || sl.Overlap != "skip" || !slices.Equal(sl.Workers, []string{slow.ID()}) {
		t.Errorf("overlap=skip schedule with a 2.5 s task = %d ticks, %d missed, workers %v; want 1 to 3 ticks and the rest missed",
			sl.Ticks, sl.Missed, sl.Workers)
	}
}
