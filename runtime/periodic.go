package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/leasegen/leasegen/internal/periodic"
	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/internal/bookkeeping"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// Periodic is a schedule of periodic tasks: a task of the handler's type,
// enqueued at every tick. Give Cron or Every.
//
// Every tick is enqueued exactly once, by whichever worker that registers
// the schedule sees it due first on the database's clock, with the
// idempotency key periodic:NAME:TICK; the schedule lives in the database,
// so ticks are not lost when workers restart. A tick found later than one
// minute (every worker down, the database unreachable) is misfired: the
// Misfire policy decides whether it still runs.
type Periodic struct {
	// Name identifies the schedule across processes. Default: the task
	// type.
	Name string
	// Cron is a five-field cron expression (minute hour day-of-month month
	// day-of-week, with names, ranges, lists and steps) or one of @yearly,
	// @monthly, @weekly, @daily and @hourly, in Zone.
	Cron string
	// Zone is the IANA time zone of Cron ("Europe/Berlin"). Default UTC.
	// A service whose system may lack a zone database imports time/tzdata
	// (the generated code does, for an annotation with tz=).
	//
	// Daylight-saving changes: a schedule whose hour field is "*" follows
	// the clock hour by hour (an hourly task runs 25 times on a fall-back
	// day); any other runs each matching local time once: in an hour the
	// clock repeats, at its first occurrence; at a time spring-forward
	// skips, at the instant the clock jumps.
	Zone string
	// Every fires at the multiples of Every since the Unix epoch (at least
	// a second, in whole milliseconds), so every process agrees on the
	// instants.
	Every time.Duration
	// Misfire is "once" (default: one run for the misfired ticks, unless an
	// on-time tick runs anyway), "skip" (none), or "backfill:N" (the N
	// latest misfired ticks).
	Misfire string
	// SkipOverlap drops a tick while the previous tick's task is still
	// queued or running.
	SkipOverlap bool
	// Payload is each tick's payload, JSON. Default {}.
	Payload []byte
	// Priority and MaxAttempts are each tick's task's (MaxAttempts
	// default 5).
	Priority    int
	MaxAttempts int
}

// WithSchedule enqueues a task of the handler's type at every tick of p,
// for as long as a worker that registered it runs. A handler may have
// several schedules, each with its own Name.
func WithSchedule(p Periodic) HandlerOption {
	return func(c *handlerConfig) { c.schedules = append(c.schedules, p) }
}

var scheduleNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]*$`)

// schedule is a registered Periodic, checked and parsed.
type schedule struct {
	def         driver.ScheduleDef
	spec        periodic.Spec
	misfire     periodic.Misfire
	skipOverlap bool
}

// newSchedule checks p, a schedule of taskType.
func newSchedule(taskType string, p Periodic) (schedule, error) {
	fail := func(format string, args ...any) (schedule, error) {
		return schedule{}, fmt.Errorf("%w: task type %q: schedule %q: %s", ErrInvalidConfig, taskType, p.Name, fmt.Sprintf(format, args...))
	}
	if p.Name == "" {
		p.Name = taskType
	}
	if len(p.Name) > maxTaskTypeLen || !scheduleNamePattern.MatchString(p.Name) {
		return fail("a name is 1 to %d letters, digits and _ . : -, starting with a letter or digit", maxTaskTypeLen)
	}
	var spec periodic.Spec
	var err error
	switch {
	case p.Cron != "" && p.Every != 0:
		return fail("give Cron or Every, not both")
	case p.Cron != "":
		spec, err = periodic.ParseCron(p.Cron, p.Zone)
	case p.Every != 0:
		if p.Zone != "" {
			return fail("Zone applies to Cron only: an interval is the same in every zone")
		}
		spec, err = periodic.ParseEvery(p.Every)
	default:
		return fail("give Cron or Every")
	}
	if err != nil {
		return fail("%v", err)
	}
	misfire, err := periodic.ParseMisfire(p.Misfire)
	if err != nil {
		return fail("%v", err)
	}
	if p.Payload == nil {
		p.Payload = []byte("{}")
	}
	if !json.Valid(p.Payload) {
		return fail("Payload is not valid JSON")
	}
	if p.MaxAttempts == 0 {
		p.MaxAttempts = defaultMaxAttempts
	}
	if p.MaxAttempts < 0 {
		return fail("MaxAttempts must be > 0, got %d", p.MaxAttempts)
	}
	overlap := "allow"
	if p.SkipOverlap {
		overlap = "skip"
	}
	return schedule{
		def: driver.ScheduleDef{
			Name: p.Name, TaskType: taskType, Spec: spec.String(), Misfire: misfire.String(), Overlap: overlap,
			Payload: p.Payload, Priority: p.Priority, MaxAttempts: p.MaxAttempts,
		},
		spec: spec, misfire: misfire, skipOverlap: p.SkipOverlap,
	}, nil
}

// collectSchedules gathers the handlers' schedules, by name, refusing a
// name given twice.
func (w *Worker) collectSchedules() ([]schedule, error) {
	var all []schedule
	seen := map[string]string{}
	for _, t := range slices.Sorted(maps.Keys(w.handlers)) {
		for _, s := range w.handlers[t].schedules {
			if other, dup := seen[s.def.Name]; dup {
				return nil, fmt.Errorf("%w: schedule %q is registered for task types %q and %q: give each its own Name", ErrInvalidConfig, s.def.Name, other, t)
			}
			seen[s.def.Name] = t
			all = append(all, s)
		}
	}
	slices.SortFunc(all, func(a, b schedule) int { return strings.Compare(a.def.Name, b.def.Name) })
	return all, nil
}

// registerSchedules stores the worker's schedules (see
// bookkeeping.RegisterSchedules): a new one's first tick is the first after
// now.
func (w *Worker) registerSchedules(ctx context.Context) error {
	if len(w.schedules) == 0 {
		return nil
	}
	defs := make([]driver.ScheduleDef, len(w.schedules))
	byName := map[string]schedule{}
	for i, s := range w.schedules {
		defs[i] = s.def
		byName[s.def.Name] = s
	}
	err := bookkeeping.RegisterSchedules(ctx, w.engine.tables, defs, func(def driver.ScheduleDef, now time.Time) time.Time {
		return byName[def.Name].spec.Next(now)
	})
	return w.engine.classify(err)
}

func scheduleNames(schedules []schedule) []string {
	names := make([]string, len(schedules))
	for i, s := range schedules {
		names[i] = s.def.Name
	}
	return names
}

// TickOf returns the tick a periodic task was enqueued for, from its
// metadata; false for a task no schedule enqueued.
func TickOf(t *Task) (schedule string, tick time.Time, ok bool) {
	name, tickText := t.Metadata[bookkeeping.MetadataSchedule], t.Metadata[bookkeeping.MetadataTick]
	if name == "" || tickText == "" {
		return "", time.Time{}, false
	}
	tick, err := time.Parse(time.RFC3339Nano, tickText)
	if err != nil {
		return "", time.Time{}, false
	}
	return name, tick, true
}

// ScheduleInfo is a stored schedule of periodic tasks (Client.Schedules).
type ScheduleInfo = leasetype.ScheduleInfo

// Schedules lists every stored schedule by name, each with the live
// workers that register it: a schedule that none registers any more (its
// handler or its WithSchedule was removed) does not fire; DeleteSchedule
// removes it.
func (c *Client) Schedules(ctx context.Context) ([]ScheduleInfo, error) {
	list, now, err := bookkeeping.Schedules(ctx, c.engine.tables)
	if err != nil {
		return nil, c.engine.classify(err)
	}
	workers, err := c.engine.tables.WorkerListLive(ctx)
	if err != nil {
		return nil, c.engine.failed(err, "list live workers")
	}
	for i := range list {
		if !list[i].Paused {
			list[i].Overdue = max(now.Sub(list[i].NextRun), 0)
		}
		for _, w := range workers {
			for _, name := range w.Schedules {
				if name == list[i].Name {
					list[i].Workers = append(list[i].Workers, w.ID)
				}
			}
		}
	}
	return list, nil
}

// PauseSchedule stops schedule name from enqueuing ticks until
// ResumeSchedule, for every worker; the ticks due meanwhile are misfired
// when it resumes (its Misfire policy decides). The state outlives
// restarts. Pausing a paused schedule changes nothing; an unknown name is
// ErrScheduleNotFound.
func (c *Client) PauseSchedule(ctx context.Context, name string) error {
	_, err := bookkeeping.SetSchedulePaused(ctx, c.engine.tables, name, true)
	return c.engine.classify(err)
}

// ResumeSchedule lets schedule name fire again, after PauseSchedule.
func (c *Client) ResumeSchedule(ctx context.Context, name string) error {
	_, err := bookkeeping.SetSchedulePaused(ctx, c.engine.tables, name, false)
	return c.engine.classify(err)
}

// TriggerSchedule enqueues one task of schedule name now, as a tick would
// (its payload, priority and attempts), outside its ticks: the schedule's
// next run does not move. Its metadata names the schedule, without a tick.
func (c *Client) TriggerSchedule(ctx context.Context, name string) (TaskID, error) {
	list, err := c.engine.tables.ScheduleList(ctx)
	if err != nil {
		return 0, c.engine.failed(err, "list schedules")
	}
	for _, s := range list {
		if s.Name != name {
			continue
		}
		ids, err := c.engine.driver.Insert(ctx, c.engine.db, []driver.NewTask{{
			Type: s.TaskType, Payload: s.Payload, Priority: s.Priority, MaxAttempts: s.MaxAttempts,
			Metadata: leasetype.EncodeMetadata(map[string]string{bookkeeping.MetadataSchedule: name}),
		}})
		if err != nil {
			return 0, c.engine.classifyWrite(err)
		}
		c.engine.observer.TasksEnqueued(s.TaskType, 1)
		c.engine.driver.Notify(s.TaskType)
		return ids[0], nil
	}
	return 0, fmt.Errorf("%w: %q", ErrScheduleNotFound, name)
}

// DeleteSchedule deletes schedule name's row: its state (next run,
// counts, paused) is gone; a worker that registers it again stores it
// anew, with its first tick after that. Delete a schedule no worker
// registers any more (Schedules shows no Workers); deleting one that
// live workers register only restarts it when one of them starts again.
func (c *Client) DeleteSchedule(ctx context.Context, name string) error {
	found, err := c.engine.tables.ScheduleDelete(ctx, name)
	if err != nil {
		return c.engine.failed(err, "delete schedule %q", name)
	}
	if !found {
		return fmt.Errorf("%w: %q", ErrScheduleNotFound, name)
	}
	return nil
}
