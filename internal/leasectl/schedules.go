package leasectl

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/leasegen/leasegen/runtime"
)

// schedules lists the stored schedules, or pauses, resumes, triggers or
// deletes one.
func schedules(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] == "list" || strings.HasPrefix(args[0], "-") {
		return listSchedules(ctx, e, args)
	}
	sub, rest := args[0], args[1:]
	pos, err := parse(newFlags("schedules "+sub), rest, 1)
	if err != nil {
		return err
	}
	name := pos[0]
	switch sub {
	case "pause":
		if err := e.client.PauseSchedule(ctx, name); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "paused schedule %s: no ticks are enqueued until leasectl schedules resume %s; the ticks due meanwhile follow its misfire policy\n", name, name)
	case "resume":
		if err := e.client.ResumeSchedule(ctx, name); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "resumed schedule %s\n", name)
	case "trigger":
		id, err := e.client.TriggerSchedule(ctx, name)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "enqueued task %d for schedule %s now; its next run is unchanged\n", id, name)
	case "delete":
		if err := e.client.DeleteSchedule(ctx, name); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "deleted schedule %s; a worker that registers it again stores it anew\n", name)
	default:
		return fmt.Errorf("%w: schedules [list] | pause|resume|trigger|delete NAME, got %q", errUsage, sub)
	}
	return nil
}

func listSchedules(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 && args[0] == "list" {
		args = args[1:]
	}
	fs := newFlags("schedules")
	asJSON := fs.Bool("json", false, "")
	if _, err := parse(fs, args, 0); err != nil {
		return err
	}
	list, err := e.client.Schedules(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		out := make([]scheduleJSON, len(list))
		for i, s := range list {
			out[i] = newScheduleJSON(s)
		}
		return writeJSON(e.stdout, out)
	}
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "SCHEDULE\tTASK TYPE\tSPEC\tMISFIRE\tOVERLAP\tNEXT RUN\tLAST TICK\tLAST TASK\tTICKS\tMISSED\tSTATE")
	for _, s := range list {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\n", s.Name, s.TaskType, s.Spec, s.Misfire, s.Overlap,
			stamp(s.NextRun), stamp(s.LastTick), taskRef(s.LastTaskID), s.Ticks, s.Missed, scheduleState(s))
	}
	return w.Flush()
}

// scheduleState says whether s fires, and why not.
func scheduleState(s runtime.ScheduleInfo) string {
	switch {
	case s.Paused:
		return "paused"
	case len(s.Workers) == 0:
		return "NOT REGISTERED: no live worker registers it, so it does not fire (leasectl schedules delete " + s.Name + " removes it)"
	case s.Overdue > 10*time.Second:
		return fmt.Sprintf("OVERDUE by %s (%d workers)", s.Overdue.Round(time.Second), len(s.Workers))
	}
	return fmt.Sprintf("active (%d workers)", len(s.Workers))
}

func taskRef(id runtime.TaskID) string {
	if id == 0 {
		return "-"
	}
	return fmt.Sprint(int64(id))
}

// scheduleJSON is schedules -json's shape.
type scheduleJSON struct {
	Name           string    `json:"name"`
	TaskType       string    `json:"task_type"`
	Spec           string    `json:"spec"`
	Misfire        string    `json:"misfire"`
	Overlap        string    `json:"overlap"`
	Payload        string    `json:"payload"`
	Priority       int       `json:"priority"`
	MaxAttempts    int       `json:"max_attempts"`
	NextRun        time.Time `json:"next_run"`
	Paused         bool      `json:"paused"`
	RegisteredAt   time.Time `json:"registered_at"`
	LastTick       time.Time `json:"last_tick,omitzero"`
	LastEnqueuedAt time.Time `json:"last_enqueued_at,omitzero"`
	LastTaskID     int64     `json:"last_task_id,omitempty"`
	Ticks          int64     `json:"ticks"`
	Missed         int64     `json:"missed"`
	Workers        []string  `json:"workers"`
	OverdueSeconds float64   `json:"overdue_seconds"`
}

func newScheduleJSON(s runtime.ScheduleInfo) scheduleJSON {
	workers := s.Workers
	if workers == nil {
		workers = []string{}
	}
	return scheduleJSON{
		Name: s.Name, TaskType: s.TaskType, Spec: s.Spec, Misfire: s.Misfire, Overlap: s.Overlap, Payload: string(s.Payload),
		Priority: s.Priority, MaxAttempts: s.MaxAttempts, NextRun: s.NextRun, Paused: s.Paused, RegisteredAt: s.RegisteredAt,
		LastTick: s.LastTick, LastEnqueuedAt: s.LastEnqueuedAt, LastTaskID: int64(s.LastTaskID), Ticks: s.Ticks, Missed: s.Missed,
		Workers: workers, OverdueSeconds: s.Overdue.Seconds(),
	}
}
