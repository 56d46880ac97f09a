package periodic

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Grace is how late a tick may be found and still count as on time: every
// on-time tick is enqueued, whatever the misfire policy. Polls, a worker's
// restart or a short database outage make ticks late by seconds.
const Grace = time.Minute

// MaxBackfill bounds misfire=backfill:N.
const MaxBackfill = 1000

// Misfire says what happens to the ticks found later than Grace, after an
// outage longer than that (no worker running, the database down).
type Misfire struct {
	// Backfill is how many of the latest misfired ticks are enqueued:
	// 0 for none (skip), -1 for one, and only when no tick is on time
	// (once), N for the N latest (backfill:N).
	Backfill int
}

// The misfire policies.
var (
	MisfireSkip = Misfire{Backfill: 0}
	MisfireOnce = Misfire{Backfill: -1}
)

// String is the policy as an annotation writes it.
func (m Misfire) String() string {
	switch {
	case m.Backfill < 0:
		return "once"
	case m.Backfill == 0:
		return "skip"
	default:
		return "backfill:" + strconv.Itoa(m.Backfill)
	}
}

// ParseMisfire reads skip, once or backfill:N.
func ParseMisfire(s string) (Misfire, error) {
	switch s {
	case "skip":
		return MisfireSkip, nil
	case "once", "":
		return MisfireOnce, nil
	}
	if n, ok := strings.CutPrefix(s, "backfill:"); ok {
		v, err := strconv.Atoi(n)
		if err != nil || v < 1 || v > MaxBackfill {
			return Misfire{}, fmt.Errorf("misfire backfill:N needs N in 1..%d, got %q", MaxBackfill, n)
		}
		return Misfire{Backfill: v}, nil
	}
	return Misfire{}, fmt.Errorf("unknown misfire policy %q: use skip, once or backfill:N", s)
}

// Fire is what one due schedule does now.
type Fire struct {
	Ticks   []time.Time // to enqueue, oldest first
	Missed  int         // due ticks the misfire policy drops
	Overlap int         // due ticks dropped because the last task still runs
	Next    time.Time   // the schedule's next run: the first tick after now
}

// Plan decides what a schedule whose next run is next does at now: which
// due ticks it enqueues under misfire, and, with skipOverlap, none while
// lastActive (the previous tick's task is still queued or running) and at
// most one otherwise.
func Plan(s Spec, next, now time.Time, misfire Misfire, skipOverlap, lastActive bool) Fire {
	var f Fire
	var late []time.Time // misfired ticks kept so far, at most the policy's count
	keep := misfire.Backfill
	if keep < 0 {
		keep = 1
	}
	t := fastForward(s, next, now, keep, &f)
	for ; !t.IsZero() && !t.After(now); t = s.Next(t) {
		if now.Sub(t) <= Grace {
			f.Ticks = append(f.Ticks, t)
			continue
		}
		late = append(late, t)
		if len(late) > keep {
			late = late[1:]
			f.Missed++
		}
	}
	f.Next = t
	if misfire.Backfill < 0 && len(f.Ticks) > 0 {
		f.Missed += len(late) // once: an on-time tick stands for the missed ones
		late = nil
	}
	f.Ticks = append(late, f.Ticks...)
	if skipOverlap {
		switch {
		case lastActive:
			f.Overlap, f.Ticks = len(f.Ticks), nil
		case len(f.Ticks) > 1:
			f.Overlap, f.Ticks = len(f.Ticks)-1, f.Ticks[:1]
		}
	}
	return f
}

// fastForward moves an interval schedule, after a long outage, from next
// to the first tick Plan must look at: the ones it passes are older than
// the keep latest misfired ticks, so they count as missed. A cron schedule
// walks its ticks: even a year of minutes is quick.
func fastForward(s Spec, next, now time.Time, keep int, f *Fire) time.Time {
	if s.every == 0 || s.every > (1<<62)/time.Duration(keep+1) {
		return next
	}
	from := now.Add(-Grace - time.Duration(keep+1)*s.every)
	if !next.Before(from) {
		return next
	}
	n := from.Sub(next) / s.every
	f.Missed += int(n)
	return next.Add(n * s.every)
}
