package bookkeeping

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

func TestRollupWindow(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.TimeOnly, s)
		if err != nil {
			t.Fatal(err)
		}
		return v.AddDate(2026, 11, 2)
	}
	never := time.Unix(0, 0)
	for _, c := range []struct {
		name       string
		now, last  time.Time
		settle     time.Duration
		from, to   time.Time
		minutesLen int
	}{
		{"first rollup counts the last hour", at("12:00:15"), never, 10 * time.Second, at("11:00:00"), at("12:00:00"), 60},
		{"within settle the last minute waits", at("12:00:05"), at("11:58:00"), 10 * time.Second, at("11:59:00"), at("11:59:00"), 0},
		{"after settle it is counted", at("12:00:10"), at("11:58:00"), 10 * time.Second, at("11:59:00"), at("12:00:00"), 1},
		{"counted minutes are not counted again", at("12:00:40"), at("11:59:00"), 10 * time.Second, at("12:00:00"), at("12:00:00"), 0},
		{"an old last counts an hour at most", at("12:00:40"), at("08:00:00"), 10 * time.Second, at("11:00:00"), at("12:00:00"), 60},
		{"negative settle counts the minute in progress", at("12:00:40"), at("11:59:00"), -time.Minute, at("12:00:00"), at("12:01:00"), 1},
	} {
		from, to := RollupWindow(c.now, c.last, c.settle)
		if !from.Equal(c.from) || !to.Equal(c.to) || int(to.Sub(from)/time.Minute) != c.minutesLen {
			t.Errorf("%s: [%s, %s), want [%s, %s)", c.name, from.Format(time.TimeOnly), to.Format(time.TimeOnly),
				c.from.Format(time.TimeOnly), c.to.Format(time.TimeOnly))
		}
	}
}

func TestMinuteRows(t *testing.T) {
	from := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	m := from.Unix() / 60
	group := func(typ string, status leasetype.Status, minute, tasks int64) driver.FinishedGroup {
		return driver.FinishedGroup{Type: typ, Status: status, Minute: minute, Tasks: tasks}
	}
	rows, err := MinuteRows(from, from.Add(3*time.Minute), []driver.FinishedGroup{
		group("b", "SUCCESS", m, 2), group("a", "FAILED", m, 1), group("a", "SUCCESS", m, 3),
		group("a", "CANCELLED", m+2, 4),
	})
	if err != nil {
		t.Fatal(err)
	}
	at := func(i int) time.Time { return from.Add(time.Duration(i) * time.Minute) }
	row := func(typ string, minute time.Time, succeeded, failed, cancelled int64) driver.MinuteRow {
		return driver.MinuteRow{Type: typ, Minute: minute, Succeeded: succeeded, Failed: failed, Cancelled: cancelled}
	}
	want := []driver.MinuteRow{
		row("a", at(0), 3, 1, 0), row("b", at(0), 2, 0, 0), row("", at(0), 5, 1, 0),
		row("", at(1), 0, 0, 0),
		row("a", at(2), 0, 0, 4), row("", at(2), 0, 0, 4),
	}
	if d := cmp.Diff(want, rows); d != "" {
		t.Errorf("rows (-want +got):\n%s", d)
	}
	if _, err := MinuteRows(from, from.Add(time.Minute), []driver.FinishedGroup{group("a", "QUEUED", m, 1)}); err == nil {
		t.Error("a QUEUED group was accepted")
	}
}
