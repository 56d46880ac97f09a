// Package periodic computes the ticks of periodic tasks: when a schedule
// (a cron expression in a time zone, or a fixed interval) fires, and which
// due ticks a misfire and an overlap policy enqueue. It is pure: the
// database's clock, read by the caller, says what "now" is.
//
// Cron expressions are parsed by github.com/robfig/cron/v3 (five fields,
// names, ranges, steps and the @yearly..@hourly descriptors); the instants
// are computed here, with this rule for daylight-saving changes:
//
//   - A schedule whose hour field is "*" follows the clock hour by hour as
//     the hours happen: an hourly task runs 25 times on a fall-back day and
//     23 times on a spring-forward day.
//   - Any other schedule runs each matching local time once: in an hour the
//     clock repeats, at its first occurrence; at a local time that
//     spring-forward skips, at the instant the clock jumps (03:00 in
//     Europe/Berlin when 02:00-03:00 is skipped).
package periodic

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Spec is a parsed schedule.
type Spec struct {
	cron  *cron.SpecSchedule // nil for an interval
	every time.Duration
	loc   *time.Location
	text  string
}

// MinEvery is the shortest interval.
const MinEvery = time.Second

// maxSearch bounds how far ahead Next looks for a matching local time.
const maxSearch = 8 * 366 * 24 * time.Hour

// ErrNeverRuns is a cron expression no date matches (the 30th of February).
var ErrNeverRuns = errors.New("the expression matches no date")

var parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ParseCron parses a five-field cron expression (or a descriptor such as
// @daily) for the IANA zone named zone ("" or "UTC": UTC). The error says
// what is wrong in words a user can act on.
func ParseCron(expr, zone string) (Spec, error) {
	expr = strings.TrimSpace(expr)
	switch {
	case expr == "":
		return Spec{}, errors.New("empty cron expression")
	case strings.HasPrefix(expr, "TZ=") || strings.HasPrefix(expr, "CRON_TZ="):
		return Spec{}, errors.New("a time zone prefix in the expression: give the zone separately (tz=)")
	case strings.HasPrefix(expr, "@every"):
		return Spec{}, errors.New("@every is an interval: use every= (Every) instead of a cron expression")
	}
	loc, err := LoadZone(zone)
	if err != nil {
		return Spec{}, err
	}
	sched, err := parser.Parse(expr)
	if err != nil {
		return Spec{}, fmt.Errorf("bad cron expression %q: %v (five fields: minute hour day-of-month month day-of-week, or @yearly, @monthly, @weekly, @daily, @hourly)", expr, err)
	}
	cs, ok := sched.(*cron.SpecSchedule)
	if !ok {
		return Spec{}, fmt.Errorf("bad cron expression %q", expr)
	}
	s := Spec{cron: cs, loc: loc, text: "cron " + expr + " " + loc.String()}
	if s.Next(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)).IsZero() {
		return Spec{}, fmt.Errorf("cron expression %q: %w", expr, ErrNeverRuns)
	}
	return s, nil
}

// LoadZone loads an IANA time zone by name; "" is UTC.
func LoadZone(zone string) (*time.Location, error) {
	if zone == "" {
		return time.UTC, nil
	}
	if zone == "Local" {
		return nil, errors.New(`time zone "Local" depends on the machine: name an IANA zone such as Europe/Berlin`)
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q: name an IANA zone such as Europe/Berlin or America/New_York (import time/tzdata where the system has no zone database)", zone)
	}
	return loc, nil
}

// ParseEvery is a schedule that fires every d, at the multiples of d since
// the Unix epoch, so every process computes the same instants.
func ParseEvery(d time.Duration) (Spec, error) {
	if d < MinEvery {
		return Spec{}, fmt.Errorf("interval %s is shorter than %s", d, MinEvery)
	}
	if d%time.Millisecond != 0 {
		return Spec{}, fmt.Errorf("interval %s is not a whole number of milliseconds", d)
	}
	return Spec{every: d, text: "every " + d.String()}, nil
}

// String is the schedule's canonical text, as the schedules table stores
// it: "cron 0 3 * * * Europe/Berlin" or "every 15m0s". Two specs with the
// same text fire at the same instants.
func (s Spec) String() string { return s.text }

// Interval is the schedule's interval, or 0 for a cron expression.
func (s Spec) Interval() time.Duration { return s.every }

// Next returns the first tick strictly after after; zero when none comes
// within eight years.
func (s Spec) Next(after time.Time) time.Time {
	if s.every > 0 {
		d := s.every.Nanoseconds()
		n := after.UnixNano()
		next := (n/d + 1) * d
		if n < 0 && n%d != 0 {
			next -= d
		}
		return time.Unix(0, next).UTC()
	}
	if s.cron.Hour&allHours == allHours {
		return s.nextByInstant(after)
	}
	return s.nextByWallClock(after)
}

const allHours = 1<<24 - 1

// starBit marks a day field given as "*" (robfig/cron's convention).
const starBit = 1 << 63

// dayMatches applies cron's day rule: when either day field is "*", both
// must match; otherwise either may.
func (s Spec) dayMatches(y int, m time.Month, d int) bool {
	c := s.cron
	if c.Month&(1<<uint(m)) == 0 {
		return false
	}
	wd := time.Date(y, m, d, 12, 0, 0, 0, time.UTC).Weekday()
	dom := c.Dom&(1<<uint(d)) != 0
	dow := c.Dow&(1<<uint(wd)) != 0
	if c.Dom&starBit != 0 || c.Dow&starBit != 0 {
		return dom && dow
	}
	return dom || dow
}

// nextByInstant walks real minutes, matching each one's local fields.
func (s Spec) nextByInstant(after time.Time) time.Time {
	t := after.Truncate(time.Minute).Add(time.Minute)
	for end := after.Add(maxSearch); t.Before(end); {
		l := t.In(s.loc)
		if !s.dayMatches(l.Year(), l.Month(), l.Day()) {
			y, m, d := l.Date()
			t = resolve(y, m, d+1, 0, 0, s.loc) // the next local midnight
			continue
		}
		if s.cron.Hour&(1<<uint(l.Hour())) != 0 && s.cron.Minute&(1<<uint(l.Minute())) != 0 {
			return t.UTC()
		}
		t = t.Add(time.Minute)
	}
	return time.Time{}
}

// nextByWallClock walks local dates and times after after's local time,
// resolving each matching one to its instant.
func (s Spec) nextByWallClock(after time.Time) time.Time {
	l := after.In(s.loc)
	y, m, d := l.Date()
	fromHour, fromMinute := l.Hour(), l.Minute()+1 // local times after after's minute
	for day := 0; day < int(maxSearch/(24*time.Hour)); day++ {
		date := time.Date(y, m, d+day, 12, 0, 0, 0, time.UTC)
		if s.dayMatches(date.Year(), date.Month(), date.Day()) {
			for h := 0; h < 24; h++ {
				if s.cron.Hour&(1<<uint(h)) == 0 || (day == 0 && h < fromHour) {
					continue
				}
				for mi := 0; mi < 60; mi++ {
					if s.cron.Minute&(1<<uint(mi)) == 0 || (day == 0 && h == fromHour && mi < fromMinute) {
						continue
					}
					if t := resolve(date.Year(), date.Month(), date.Day(), h, mi, s.loc); t.After(after) {
						return t.UTC()
					}
				}
			}
		}
	}
	return time.Time{}
}

// resolve is the instant of a local time: its first occurrence when the
// clock repeats it, the instant the clock jumps when it skips it.
func resolve(y int, m time.Month, d, h, mi int, loc *time.Location) time.Time {
	wall := time.Date(y, m, d, h, mi, 0, 0, time.UTC)
	var first time.Time
	for _, probe := range []time.Duration{-24 * time.Hour, 24 * time.Hour} {
		_, offset := wall.Add(probe).In(loc).Zone()
		t := wall.Add(-time.Duration(offset) * time.Second)
		if sameWall(t.In(loc), wall) && (first.IsZero() || t.Before(first)) {
			first = t
		}
	}
	if !first.IsZero() {
		return first
	}
	// Skipped: read with the offset before the jump, the local time lands
	// after it; the zone period it lands in starts at the jump.
	_, before := wall.Add(-24 * time.Hour).In(loc).Zone()
	start, _ := wall.Add(-time.Duration(before) * time.Second).In(loc).ZoneBounds()
	return start
}

func sameWall(t, wall time.Time) bool {
	y, m, d := t.Date()
	wy, wm, wd := wall.Date()
	return y == wy && m == wm && d == wd && t.Hour() == wall.Hour() && t.Minute() == wall.Minute()
}
