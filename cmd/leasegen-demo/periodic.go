package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/testdata/example/billing"
)

// periodicReport checks the example service's reconcile schedule after the
// run: its worker processes (one killed -9 midway) enqueued each tick once,
// and only overlap=skip dropped any. It returns the line to print and a
// problem, if any.
func periodicReport(ctx context.Context, client *runtime.Client) (line, problem string, err error) {
	list, err := client.Schedules(ctx)
	if err != nil {
		return "", "", err
	}
	i := slices.IndexFunc(list, func(s runtime.ScheduleInfo) bool { return s.Name == billing.TaskReconcile })
	if i < 0 {
		return "", "the reconcile schedule is not stored", nil
	}
	s := list[i]
	tasks, err := client.List(ctx, runtime.Filter{Type: billing.TaskReconcile, Limit: 1000})
	if err != nil {
		return "", "", err
	}
	var ticks []time.Time
	for _, t := range tasks {
		if _, tick, ok := runtime.TickOf(&runtime.Task{Metadata: t.Metadata}); ok {
			ticks = append(ticks, tick)
		}
	}
	slices.SortFunc(ticks, func(a, b time.Time) int { return a.Compare(b) })
	// Every tick from the first enqueued one up to the schedule's next run
	// is either enqueued or counted as dropped: between two enqueued ticks,
	// or after the last one (its task still ran when the next came due).
	gaps := 0
	for i := 1; i < len(ticks); i++ {
		gaps += int(ticks[i].Sub(ticks[i-1])/(2*time.Second)) - 1
	}
	if len(ticks) > 0 {
		gaps += max(int(s.NextRun.Sub(ticks[len(ticks)-1])/(2*time.Second))-1, 0)
	}
	line = fmt.Sprintf("periodic:   %s (%s) enqueued %d ticks while the demo ran, one task each; %d dropped by overlap=skip",
		s.Name, s.Spec, len(ticks), s.Missed)
	switch {
	case len(ticks) == 0:
		problem = "the reconcile schedule never ticked"
	case s.Ticks != int64(len(ticks)) || len(ticks) != len(tasks):
		problem = fmt.Sprintf("the schedule counted %d ticks for %d tick tasks", s.Ticks, len(tasks))
	case int64(gaps) != s.Missed:
		problem = fmt.Sprintf("%d ticks neither enqueued nor counted from the first to the next run, %d dropped by policy", gaps, s.Missed)
	}
	return line, problem, nil
}
