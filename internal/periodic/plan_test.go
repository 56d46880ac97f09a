package periodic

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestPlanAfterAnOutage(t *testing.T) {
	every, err := ParseEvery(15 * time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	hourly := mustCron(t, "0 * * * *", "Europe/Berlin")
	next := time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)
	outage := next.Add(2*time.Hour + 10*time.Second) // found 2 h late: 10:00:10
	at := func(hm string) time.Time {
		v, _ := time.Parse("2006-01-02 15:04", "2026-12-03 "+hm)
		return v
	}
	cases := []struct {
		name    string
		spec    Spec
		misfire Misfire
		want    Fire
	}{
		{"skip drops the misfired ticks, keeps the on-time one", every, MisfireSkip,
			Fire{Ticks: []time.Time{at("10:00")}, Missed: 8, Next: at("10:15")}},
		{"once: the on-time tick stands for the missed ones", every, MisfireOnce,
			Fire{Ticks: []time.Time{at("10:00")}, Missed: 8, Next: at("10:15")}},
		{"backfill:3 enqueues the 3 latest misfired ticks and the on-time one", every, Misfire{Backfill: 3},
			Fire{Ticks: []time.Time{at("09:00"), at("09:15"), at("09:30"), at("09:45"), at("10:00")}[1:], Missed: 5, Next: at("10:15")}},
		{"backfill:20 enqueues every tick", every, Misfire{Backfill: 20},
			Fire{Ticks: []time.Time{at("08:00"), at("08:15"), at("08:30"), at("08:45"), at("09:00"), at("09:15"), at("09:30"), at("09:45"), at("10:00")}, Next: at("10:15")}},
		{"hourly cron, backfill:1", hourly, Misfire{Backfill: 1},
			Fire{Ticks: []time.Time{at("09:00"), at("10:00")}, Missed: 1, Next: at("11:00")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Plan(c.spec, next, outage, c.misfire, false, false)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("Plan (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlanOnceWithoutAnOnTimeTick(t *testing.T) {
	daily := mustCron(t, "0 3 * * *", "America/New_York")
	next := local(t, "America/New_York", "2026-12-01 03:00")
	now := local(t, "America/New_York", "2026-12-03 14:00") // 2.5 days down
	got := Plan(daily, next, now, MisfireOnce, false, false)
	want := Fire{Ticks: []time.Time{local(t, "America/New_York", "2026-12-03 03:00").UTC()}, Missed: 2, Next: local(t, "America/New_York", "2026-12-04 03:00").UTC()}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("once after 2.5 days down (-want +got):\n%s", diff)
	}
	if got := Plan(daily, next, now, MisfireSkip, false, false); len(got.Ticks) != 0 || got.Missed != 3 {
		t.Errorf("skip after 2.5 days down = %+v, want no ticks and 3 missed", got)
	}
}

func TestPlanOverlap(t *testing.T) {
	every, _ := ParseEvery(time.Second)
	next := time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)
	now := next.Add(2500 * time.Millisecond) // three ticks due
	if got := Plan(every, next, now, MisfireOnce, true, true); len(got.Ticks) != 0 || got.Overlap != 3 {
		t.Errorf("overlap=skip while the last task runs = %+v, want no ticks and 3 dropped", got)
	}
	got := Plan(every, next, now, MisfireOnce, true, false)
	if len(got.Ticks) != 1 || !got.Ticks[0].Equal(next) || got.Overlap != 2 {
		t.Errorf("overlap=skip after the last task ended = %+v, want the first tick only", got)
	}
	if got := Plan(every, next, now, MisfireOnce, false, true); len(got.Ticks) != 3 {
		t.Errorf("overlap=allow = %+v, want all three ticks", got)
	}
}

// TestPlanLongOutage skips ahead over an interval's ticks rather than
// walking 26 million of them.
func TestPlanLongOutage(t *testing.T) {
	every, _ := ParseEvery(time.Second)
	next := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := next.Add(300 * 24 * time.Hour)
	got := Plan(every, next, now, Misfire{Backfill: 2}, false, false)
	// 61 on time (the last minute's), 2 backfilled, the rest missed.
	if len(got.Ticks) != 63 || got.Missed != 300*24*3600+1-63 {
		t.Errorf("300 days of 1 s ticks with backfill:2: %d ticks, %d missed; want 63 and %d", len(got.Ticks), got.Missed, 300*24*3600+1-63)
	}
}

func TestParseMisfire(t *testing.T) {
	for in, want := range map[string]Misfire{"skip": MisfireSkip, "once": MisfireOnce, "": MisfireOnce, "backfill:5": {Backfill: 5}} {
		got, err := ParseMisfire(in)
		if err != nil || got != want {
			t.Errorf("ParseMisfire(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"backfill:0", "backfill:x", "backfill:1001", "always"} {
		if _, err := ParseMisfire(in); err == nil {
			t.Errorf("ParseMisfire(%q) succeeded; want an error", in)
		}
	}
}
