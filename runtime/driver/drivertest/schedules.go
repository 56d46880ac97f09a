package drivertest

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/internal/testwait"
	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/internal/bookkeeping"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// TickDef is a schedule of task type "tick".
func TickDef(name, spec string) driver.ScheduleDef {
	return driver.ScheduleDef{Name: name, TaskType: "tick", Spec: spec, Misfire: "once", Overlap: "allow",
		Payload: []byte(`{"n":1}`), Priority: 3, MaxAttempts: 4}
}

// SecondsBefore is a first-run func whose first tick is n whole seconds
// before the database's now.
func SecondsBefore(n int) func(driver.ScheduleDef, time.Time) time.Time {
	return func(_ driver.ScheduleDef, now time.Time) time.Time {
		return now.Truncate(time.Second).Add(-time.Duration(n) * time.Second)
	}
}

// EverySecond plans every due second-tick of each schedule up to now.
func EverySecond(now time.Time, due []bookkeeping.DueSchedule) []bookkeeping.ScheduleFire {
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

// everySecondThenPause plans like EverySecond but moves each next run an
// hour on, so a check after the fire sees nothing due however slowly it
// runs.
func everySecondThenPause(now time.Time, due []bookkeeping.DueSchedule) []bookkeeping.ScheduleFire {
	fires := EverySecond(now, due)
	for i := range fires {
		fires[i].Next = fires[i].Next.Add(time.Hour)
	}
	return fires
}

func scheduleNamed(t *testing.T, b *Bundle, name string) leasetype.ScheduleInfo {
	t.Helper()
	list, err := b.Driver.Tables().ScheduleList(bg)
	return ScheduleNamed(t, list, err, name)
}

// ScheduleNamed returns schedule name of list (a listing and its error),
// failing t when the listing failed or holds no such schedule.
func ScheduleNamed(t testing.TB, list []leasetype.ScheduleInfo, err error, name string) leasetype.ScheduleInfo {
	t.Helper()
	dbtest.Must(t, "list schedules", err)
	for _, s := range list {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("schedule %q not stored; have %v", name, list)
	return leasetype.ScheduleInfo{}
}

// A registered schedule whose first run is due shows in the probe; a fire
// inserts a task per tick, with the tick key, the schedule's payload,
// priority, attempts and the tick metadata, and moves the schedule on;
// then the probe says nothing is due, and a probe for other schedules
// never did.
func testSchedulesRegisterAndFire(t *testing.T, b *Bundle) {
	dbtest.Must(t, "register", bookkeeping.RegisterSchedules(bg, b.Driver.Tables(), []driver.ScheduleDef{TickDef("s1", "every 1s")}, SecondsBefore(2)))
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
		info := b.Get(t, id)
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
	dbtest.Must(t, "register", bookkeeping.RegisterSchedules(bg, b.Driver.Tables(), []driver.ScheduleDef{TickDef("race", "every 1s")}, SecondsBefore(3)))
	other := b.H.New(b.DB.Open(t))
	other.Attach(driver.Hooks{})
	planned := make(chan struct{})
	var once sync.Once
	slow := func(now time.Time, due []bookkeeping.DueSchedule) []bookkeeping.ScheduleFire {
		once.Do(func() { close(planned) })
		time.Sleep(300 * time.Millisecond) // hold the lock while the other fires
		return EverySecond(now, due)
	}
	var wg sync.WaitGroup
	var firstFired []bookkeeping.ScheduleFire
	var firstErr error
	wg.Go(func() {
		firstFired, firstErr = bookkeeping.FireSchedules(bg, b.Driver.Tables(), []string{"race"}, slow)
	})
	<-planned
	secondFired, secondErr := bookkeeping.FireSchedules(bg, other.Tables(), []string{"race"}, EverySecond)
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

// The fire sees whether the latest tick's task is still active, for
// overlap=skip: while it is queued, and no longer once it finished.
func testScheduleSeesLastTaskActive(t *testing.T, b *Bundle) {
	dbtest.Must(t, "register", bookkeeping.RegisterSchedules(bg, b.Driver.Tables(), []driver.ScheduleDef{TickDef("o", "every 1s")}, SecondsBefore(0)))
	var seen []bool
	plan := func(now time.Time, due []bookkeeping.DueSchedule) []bookkeeping.ScheduleFire {
		for _, d := range due {
			seen = append(seen, d.LastTaskActive)
		}
		return EverySecond(now, due)
	}
	fired, err := bookkeeping.FireSchedules(bg, b.Driver.Tables(), []string{"o"}, plan)
	dbtest.Must(t, "first fire", err)
	waitDue := func() {
		testwait.Until(t, func() bool { // the database's clock reaches the next tick
			p, err := b.Driver.Probe(bg, nil, []string{"o"})
			dbtest.Must(t, "probe", err)
			return p.SchedulesDue
		}, func() string { return "schedule o not due again" })
	}
	waitDue()
	_, err = bookkeeping.FireSchedules(bg, b.Driver.Tables(), []string{"o"}, plan)
	dbtest.Must(t, "second fire", err)
	last := scheduleNamed(t, b, "o").LastTaskID
	claimed := b.Claim(t, "w", 100, "tick")
	for _, c := range claimed {
		ok, err := b.Driver.Complete(bg, b.DB.DB, "w", driver.LeaseRef{ID: c.ID, Attempt: c.Attempt}, "")
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
