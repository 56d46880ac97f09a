package runtime

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func noop(context.Context, *Task) error { return nil }

// A schedule that cannot run is an ErrInvalidConfig from Handle, saying
// what is wrong.
func TestWithScheduleRejectsBadSchedules(t *testing.T) {
	cases := []struct {
		p    Periodic
		want string
	}{
		{Periodic{}, "give Cron or Every"},
		{Periodic{Cron: "@daily", Every: time.Hour}, "not both"},
		{Periodic{Cron: "0 3 * *"}, "bad cron expression"},
		{Periodic{Cron: "0 3 * * *", Zone: "Mars/Olympus"}, `unknown time zone "Mars/Olympus"`},
		{Periodic{Every: time.Hour, Zone: "UTC"}, "Zone applies to Cron only"},
		{Periodic{Every: 100 * time.Millisecond}, "shorter than 1s"},
		{Periodic{Every: time.Hour, Misfire: "later"}, "unknown misfire policy"},
		{Periodic{Every: time.Hour, Payload: []byte("{")}, "not valid JSON"},
		{Periodic{Every: time.Hour, MaxAttempts: -1}, "MaxAttempts must be > 0"},
		{Periodic{Every: time.Hour, Name: "no spaces"}, "a name is"},
	}
	e := newSQLiteEngine(t) // Handle checks without the database
	for _, c := range cases {
		w, err := NewWorker(e, Config{Logger: quietLogger()})
		if err != nil {
			t.Fatal(err)
		}
		err = w.Handle("report", noop, WithSchedule(c.p))
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("WithSchedule(%+v): err = %v, want ErrInvalidConfig saying %q", c.p, err, c.want)
		}
	}
}

// Two handlers may not register schedules of the same name; a handler may
// have several schedules.
func TestScheduleNamesAreUnique(t *testing.T) {
	e := newSQLiteEngine(t)
	w, err := NewWorker(e, Config{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Handle("a", noop, WithSchedule(Periodic{Name: "tick", Every: time.Hour}), WithSchedule(Periodic{Name: "tock", Every: time.Hour})); err != nil {
		t.Fatal(err)
	}
	if err := w.Handle("b", noop, WithSchedule(Periodic{Name: "tick", Every: time.Minute})); err != nil {
		t.Fatal(err)
	}
	err = w.Start(bg)
	if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), `schedule "tick" is registered for task types "a" and "b"`) {
		t.Fatalf("Start with a schedule name twice: err = %v", err)
	}
	client, _ := NewClient(e, ClientConfig{})
	if list, err := client.Schedules(bg); err != nil || len(list) != 0 {
		t.Errorf("a refused start stored schedules %v (%v)", list, err)
	}

	w2 := startWorker(t, e, Config{Logger: quietLogger()}, "a", noop,
		WithSchedule(Periodic{Name: "tick", Every: time.Hour}), WithSchedule(Periodic{Name: "tock", Cron: "@daily", Zone: "Europe/Berlin"}))
	list, err := client.Schedules(bg)
	if err != nil || len(list) != 2 || list[0].Name != "tick" || list[1].Name != "tock" || list[1].Spec != "cron @daily Europe/Berlin" {
		t.Fatalf("schedules = %+v, %v", list, err)
	}
	if got := list[0].Workers; len(got) != 1 || got[0] != w2.ID() {
		t.Errorf("tick's workers = %v, want %s", got, w2.ID())
	}
}

func TestTickOf(t *testing.T) {
	tick := time.Date(2026, 12, 3, 3, 0, 0, 0, time.UTC)
	task := &Task{Metadata: map[string]string{"leasegen.schedule": "nightly", "leasegen.tick": "2026-12-03T03:00:00Z"}}
	if name, got, ok := TickOf(task); !ok || name != "nightly" || !got.Equal(tick) {
		t.Errorf("TickOf = %q, %v, %v", name, got, ok)
	}
	if _, _, ok := TickOf(&Task{Metadata: map[string]string{"leasegen.schedule": "nightly"}}); ok {
		t.Error("TickOf of a triggered task (no tick) reported a tick")
	}
	if _, _, ok := TickOf(&Task{}); ok {
		t.Error("TickOf of a plain task reported a tick")
	}
}
