package runtime

import (
	"context"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/leasegen/leasegen/internal/periodic"
	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/internal/bookkeeping"
)

// scheduler fires the worker's due schedules: it locks them, enqueues
// their ticks and moves them on, in one transaction per fire (see
// bookkeeping.FireSchedules). It learns that a schedule is due from the
// poller's idle probe, which asks about schedules too, or, while the
// poller is busy claiming, from a probe of its own once per PollInterval;
// after a fire it wakes for the next tick it knows of.
type scheduler struct {
	driver   driver.Driver
	tables   driver.Tables
	logger   *slog.Logger
	clock    Clock
	observer Observer
	workerID string
	names    []string
	byName   map[string]schedule
	interval time.Duration // PollInterval
	timeout  time.Duration // bounds each transaction: LeaseTimeout
	// due is signalled by the poller's probe; probed holds when that probe
	// last ran (Clock, Unix nanoseconds).
	due    <-chan struct{}
	probed *atomic.Int64
	outage *outage
	// stale holds the schedules whose stored spec is another worker's,
	// logged once each.
	stale map[string]bool
	fired *atomic.Int64 // the worker's tick count
}

// tickMargin is how long after a tick's instant, by this process's
// estimate of the database's clock, the scheduler checks for it: the
// estimate is off by part of a round trip.
const tickMargin = 2 * time.Millisecond

func newScheduler(w *Worker) *scheduler {
	s := &scheduler{
		driver: w.engine.driver, tables: w.engine.tables, logger: w.cfg.Logger, clock: w.cfg.Clock, observer: w.engine.observer, workerID: w.cfg.WorkerID,
		byName: map[string]schedule{}, interval: w.cfg.PollInterval, timeout: w.cfg.LeaseTimeout,
		due: w.scheduleDue, probed: &w.probed, outage: newOutage("schedule fire", w.cfg, w.cfg.PollInterval),
		stale: map[string]bool{}, fired: &w.stats.ticks,
	}
	for _, sc := range w.schedules {
		s.names = append(s.names, sc.def.Name)
		s.byName[sc.def.Name] = sc
	}
	slices.Sort(s.names)
	return s
}

func (s *scheduler) run(ctx context.Context, stop <-chan struct{}) {
	timer := time.NewTimer(0) // a schedule may be due since before the start
	defer timer.Stop()
	predicted := true // the timer is set for a tick: check whatever the poller did
	for {
		var wait time.Duration
		select {
		case <-stop:
			return
		case <-s.due:
			wait, predicted = s.tick(ctx, false)
		case <-timer.C:
			if !predicted && s.pollerProbedRecently() {
				wait = s.interval // the poller's probe asks about schedules too
			} else {
				wait, predicted = s.tick(ctx, true)
			}
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(wait)
	}
}

// pollerProbedRecently reports whether the poller's idle probe, which
// also looks for due schedules, ran within the last interval.
func (s *scheduler) pollerProbedRecently() bool {
	return s.clock.Now().Sub(time.Unix(0, s.probed.Load())) < s.interval
}

// tick probes first when probe is set, fires the due schedules, and
// returns the wait before the next check, and whether that is the time of
// a tick it fired the schedule for.
func (s *scheduler) tick(ctx context.Context, probe bool) (time.Duration, bool) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if probe {
		p, err := s.driver.Probe(ctx, nil, s.names)
		if err != nil {
			return s.outage.failed(err), false
		}
		if !p.SchedulesDue {
			s.outage.succeeded()
			return s.interval, false
		}
	}
	started := s.clock.Now()
	var dbNow time.Time
	var outcomes map[string]periodic.Fire
	fired, err := bookkeeping.FireSchedules(ctx, s.tables, s.names, func(now time.Time, due []bookkeeping.DueSchedule) []bookkeeping.ScheduleFire {
		dbNow, outcomes = now, map[string]periodic.Fire{}
		return s.plan(now, due, outcomes)
	})
	if err != nil {
		return s.outage.failed(err), false
	}
	s.outage.succeeded()
	wait, predicted := s.interval, false
	skew := dbNow.Sub(started) // the database's clock ahead of ours, roughly
	for _, f := range fired {
		s.report(f, outcomes[f.Name], dbNow)
		if until := f.Next.Sub(s.clock.Now().Add(skew)); until < wait {
			wait, predicted = max(until+tickMargin, time.Millisecond), true
		}
	}
	return wait, predicted
}

// plan decides each due schedule's fire at now, on the database's clock,
// and records the outcomes.
func (s *scheduler) plan(now time.Time, due []bookkeeping.DueSchedule, outcomes map[string]periodic.Fire) []bookkeeping.ScheduleFire {
	var fires []bookkeeping.ScheduleFire
	for _, d := range due {
		sc, ok := s.byName[d.Name]
		if !ok {
			continue
		}
		if d.Spec != sc.def.Spec {
			if !s.stale[d.Name] {
				s.stale[d.Name] = true
				s.logger.Warn("leasegen: another worker registered this schedule with another spec since this worker started; the latest registration fires it",
					"worker", s.workerID, "schedule", d.Name, "stored", d.Spec, "here", sc.def.Spec)
			}
			continue
		}
		f := periodic.Plan(sc.spec, d.NextRun, now, sc.misfire, sc.skipOverlap, d.LastTaskActive)
		outcomes[d.Name] = f
		fires = append(fires, bookkeeping.ScheduleFire{Name: d.Name, From: d.NextRun, Next: f.Next, Ticks: f.Ticks, Missed: f.Missed + f.Overlap})
	}
	return fires
}

// report tells the observer and the log what a fire did.
func (s *scheduler) report(f bookkeeping.ScheduleFire, p periodic.Fire, now time.Time) {
	sc := s.byName[f.Name]
	lags := make([]time.Duration, len(f.Ticks))
	for i, t := range f.Ticks {
		lags[i] = max(now.Sub(t), 0)
	}
	s.fired.Add(int64(len(f.Ticks)))
	s.observer.ScheduleFired(ScheduleFiring{Schedule: f.Name, TaskType: sc.def.TaskType, Lags: lags, Missed: p.Missed, Overlapped: p.Overlap})
	if len(f.Ticks) > 0 {
		s.driver.Notify(sc.def.TaskType)
	}
	if p.Missed > 0 {
		s.logger.Warn("leasegen: a schedule's ticks were found more than a minute late; its misfire policy dropped some",
			"worker", s.workerID, "schedule", f.Name, "misfire", sc.def.Misfire, "missed", p.Missed, "enqueued", len(f.Ticks))
	}
}
