package periodic

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func mustCron(t *testing.T, expr, zone string) Spec {
	t.Helper()
	s, err := ParseCron(expr, zone)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// local parses a local time in zone, at its first occurrence.
func local(t *testing.T, zone, value string) time.Time {
	t.Helper()
	loc, err := time.LoadLocation(zone)
	if err != nil {
		t.Fatal(err)
	}
	v, err := time.ParseInLocation("2006-01-02 15:04", value, loc)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// ticks lists the ticks in (from, to], as RFC 3339 local times of zone.
func ticks(s Spec, zone string, from, to time.Time) []string {
	loc, _ := time.LoadLocation(zone)
	var out []string
	for t := s.Next(from); !t.IsZero() && !t.After(to); t = s.Next(t) {
		out = append(out, t.In(loc).Format("2006-01-02 15:04 -07:00"))
	}
	return out
}

func TestDaylightSavingChanges(t *testing.T) {
	cases := []struct {
		name, expr, zone, from, to string
		want                       []string
	}{
		{
			name: "Berlin spring-forward: a skipped 02:30 runs when the clock jumps",
			expr: "30 2 * * *", zone: "Europe/Berlin", from: "2026-03-28 00:00", to: "2026-03-30 23:00",
			want: []string{"2026-03-28 02:30 +01:00", "2026-03-29 03:00 +02:00", "2026-03-30 02:30 +02:00"},
		},
		{
			name: "Berlin fall-back: a repeated 02:30 runs once, at its first occurrence",
			expr: "30 2 * * *", zone: "Europe/Berlin", from: "2026-10-24 00:00", to: "2026-10-26 23:00",
			want: []string{"2026-10-24 02:30 +02:00", "2026-10-25 02:30 +02:00", "2026-10-26 02:30 +01:00"},
		},
		{
			name: "New York spring-forward: 02:00 runs at 03:00, and 03:00 is the same tick",
			expr: "0 2,3 * * *", zone: "America/New_York", from: "2026-03-08 00:00", to: "2026-03-08 23:00",
			want: []string{"2026-03-08 03:00 -04:00"},
		},
		{
			name: "New York fall-back: 01:30 runs once",
			expr: "30 1 * * *", zone: "America/New_York", from: "2026-10-31 12:00", to: "2026-11-02 12:00",
			want: []string{"2026-11-01 01:30 -04:00", "2026-11-02 01:30 -05:00"},
		},
		{
			name: "New York fall-back: an hourly schedule runs in both 01:00 hours",
			expr: "15 * * * *", zone: "America/New_York", from: "2026-11-01 00:00", to: "2026-11-01 03:00",
			want: []string{"2026-11-01 00:15 -04:00", "2026-11-01 01:15 -04:00", "2026-11-01 01:15 -05:00", "2026-11-01 02:15 -05:00"},
		},
		{
			name: "Berlin spring-forward: an hourly schedule has no 02:00 hour",
			expr: "0 * * * *", zone: "Europe/Berlin", from: "2026-03-29 00:30", to: "2026-03-29 04:00",
			want: []string{"2026-03-29 01:00 +01:00", "2026-03-29 03:00 +02:00", "2026-03-29 04:00 +02:00"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := mustCron(t, c.expr, c.zone)
			got := ticks(s, c.zone, local(t, c.zone, c.from), local(t, c.zone, c.to))
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("ticks of %q in %s (-want +got):\n%s", c.expr, c.zone, diff)
			}
		})
	}
}

// TestDailyRunsOncePerDay counts a year of daily ticks in zones with
// daylight saving: one per day, never 366 in a 365-day year.
func TestDailyRunsOncePerDay(t *testing.T) {
	for _, zone := range []string{"America/New_York", "Europe/Berlin", "Australia/Sydney", "UTC"} {
		for _, expr := range []string{"1 1 * * *", "30 2 * * *", "@daily"} {
			s := mustCron(t, expr, zone)
			from, to := local(t, zone, "2026-12-31 23:59"), local(t, zone, "2027-12-31 23:59")
			if n := len(ticks(s, zone, from, to)); n != 365 {
				t.Errorf("%q in %s: %d ticks in 2027, want 365", expr, zone, n)
			}
		}
	}
	hourly := mustCron(t, "@hourly", "America/New_York")
	from, to := local(t, "America/New_York", "2026-12-31 23:59"), local(t, "America/New_York", "2027-12-31 23:59")
	if n := len(ticks(hourly, "America/New_York", from, to)); n != 365*24 {
		t.Errorf("@hourly in New York: %d ticks in 2027, want %d (one per real hour)", n, 365*24)
	}
}

func TestCronFields(t *testing.T) {
	cases := []struct {
		expr, from string
		want       []string
	}{
		{"*/20 9-10 * * MON-FRI", "2026-12-04 09:50", []string{"2026-12-04 10:00 +00:00", "2026-12-04 10:20 +00:00", "2026-12-04 10:40 +00:00", "2026-12-07 09:00 +00:00"}},
		// Day of month and day of week both given: either matches.
		{"0 0 1 * SUN", "2026-11-28 00:00", []string{"2026-11-29 00:00 +00:00", "2026-12-01 00:00 +00:00", "2026-12-06 00:00 +00:00"}},
		{"0 12 29 2 *", "2026-01-01 00:00", []string{"2028-02-29 12:00 +00:00"}},
		{"@monthly", "2026-11-15 00:00", []string{"2026-12-01 00:00 +00:00", "2027-01-01 00:00 +00:00"}},
	}
	for _, c := range cases {
		s := mustCron(t, c.expr, "")
		var got []string
		at := local(t, "UTC", c.from)
		for range c.want {
			at = s.Next(at)
			got = append(got, at.Format("2006-01-02 15:04 -07:00"))
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%q from %s (-want +got):\n%s", c.expr, c.from, diff)
		}
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct{ expr, zone, want string }{
		{"0 3 * *", "", "bad cron expression"},
		{"61 * * * *", "", "bad cron expression"},
		{"0 0 30 2 *", "", "matches no date"},
		{"@every 5m", "", "use every="},
		{"CRON_TZ=UTC 0 3 * * *", "", "give the zone separately"},
		{"0 3 * * *", "Europe/Berln", `unknown time zone "Europe/Berln"`},
		{"0 3 * * *", "Local", "depends on the machine"},
		{"", "", "empty cron expression"},
	}
	for _, c := range cases {
		_, err := ParseCron(c.expr, c.zone)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseCron(%q, %q) = %v, want an error containing %q", c.expr, c.zone, err, c.want)
		}
	}
	if _, err := ParseEvery(500 * time.Millisecond); err == nil {
		t.Error("ParseEvery(500ms) succeeded; want an error")
	}
}

func TestEveryIsAlignedToTheEpoch(t *testing.T) {
	s, err := ParseEvery(15 * time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 3, 10, 7, 12, 0, time.UTC)
	want := time.Date(2026, 12, 3, 10, 15, 0, 0, time.UTC)
	if got := s.Next(at); !got.Equal(want) {
		t.Errorf("Next(%s) = %s, want %s", at, got, want)
	}
	if got := s.Next(want); !got.Equal(want.Add(15 * time.Minute)) {
		t.Errorf("Next(%s) = %s, want the tick after it", want, got)
	}
	if s.String() != "every 15m0s" {
		t.Errorf("String() = %q", s.String())
	}
}
