package leasectl

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/leasegen/leasegen/runtime"
)

// workflows lists the latest workflows, shows one with its steps, or
// cancels one.
func workflows(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 || args[0] == "list" || strings.HasPrefix(args[0], "-") {
		return listWorkflows(ctx, e, args)
	}
	sub, rest := args[0], args[1:]
	fs := newFlags("workflows " + sub)
	asJSON := fs.Bool("json", false, "")
	pos, err := parse(fs, rest, 1)
	if err != nil {
		return err
	}
	n, err := strconv.ParseInt(pos[0], 10, 64)
	if err != nil {
		return fmt.Errorf("%w: workflow id %q is not a number", errUsage, pos[0])
	}
	id := runtime.WorkflowID(n)
	switch sub {
	case "show":
		w, err := e.client.Workflow(ctx, id)
		if err != nil {
			return err
		}
		if *asJSON {
			return writeJSON(e.stdout, newWorkflowJSON(w))
		}
		return printWorkflow(e, w)
	case "cancel":
		cancelled, err := e.client.CancelWorkflow(ctx, id)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "cancelled %d steps of workflow %d that had not ended (a running one stops at its worker's next heartbeat)\n", cancelled, id)
	default:
		return fmt.Errorf("%w: workflows [list] | show|cancel ID, got %q", errUsage, sub)
	}
	return nil
}

func listWorkflows(ctx context.Context, e *env, args []string) error {
	if len(args) > 0 && args[0] == "list" {
		args = args[1:]
	}
	fs := newFlags("workflows")
	asJSON := fs.Bool("json", false, "")
	limit := fs.Int("limit", 50, "")
	if _, err := parse(fs, args, 0); err != nil {
		return err
	}
	if *limit <= 0 {
		return fmt.Errorf("%w: -limit must be above 0, got %d", errUsage, *limit)
	}
	list, err := e.client.Workflows(ctx, *limit)
	if err != nil {
		return err
	}
	if *asJSON {
		out := make([]workflowSummaryJSON, len(list))
		for i, w := range list {
			out[i] = workflowSummaryJSON{ID: int64(w.ID), Name: w.Name, CreatedAt: w.CreatedAt, Steps: w.Steps,
				Succeeded: w.Succeeded, Failed: w.Failed, State: w.State(), Status: string(w.Status), EndedAt: endedAt(w.EndedAt)}
		}
		return writeJSON(e.stdout, out)
	}
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tNAME\tCREATED\tSTEPS\tSUCCEEDED\tFAILED OR CANCELLED\tSTATE\tENDED")
	for _, s := range list {
		ended := "-"
		if s.Status != "" {
			ended = stamp(s.EndedAt) + " " + string(s.Status)
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%d\t%d\t%d\t%s\t%s\n", s.ID, s.Name, stamp(s.CreatedAt), s.Steps, s.Succeeded, s.Failed, s.State(), ended)
	}
	return w.Flush()
}

// printWorkflow prints w and a line per step.
func printWorkflow(e *env, w runtime.WorkflowInfo) error {
	fmt.Fprintf(e.stdout, "workflow %d %s, created %s", w.ID, w.Name, stamp(w.CreatedAt))
	if w.Status != "" {
		fmt.Fprintf(e.stdout, ", ended %s %s after %s", stamp(w.EndedAt), w.Status, w.EndedAt.Sub(w.CreatedAt).Round(time.Millisecond))
	}
	fmt.Fprintln(e.stdout)
	t := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(t, "STEP\tTASK\tSTATUS\tAFTER\tON A PARENT'S FAILURE")
	for _, s := range w.Steps {
		status := string(s.Status)
		switch {
		case status == "":
			status = "(task deleted)"
		case s.Waiting:
			status += " (waiting for its parents)"
		}
		after := "-"
		if len(s.After) > 0 {
			after = strings.Join(s.After, ", ")
		}
		fmt.Fprintf(t, "%s\t%d\t%s\t%s\t%s\n", s.Name, s.TaskID, status, after, s.OnParentFailure())
	}
	if err := t.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, "leasectl show TASK shows a step's task; leasectl retry TASK runs a failed step again, and the steps it cancelled after it")
	return nil
}

// workflowSummaryJSON is workflows -json's shape.
type workflowSummaryJSON struct {
	ID        int64      `json:"id"`
	Name      string     `json:"name"`
	CreatedAt time.Time  `json:"created_at"`
	Steps     int        `json:"steps"`
	Succeeded int        `json:"succeeded"`
	Failed    int        `json:"failed_or_cancelled"`
	State     string     `json:"state"`
	Status    string     `json:"status,omitempty"`   // once ended
	EndedAt   *time.Time `json:"ended_at,omitempty"` // once ended
}

// endedAt is nil for a workflow that has not ended.
func endedAt(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// workflowJSON is workflows show -json's shape.
type workflowJSON struct {
	ID        int64      `json:"id"`
	Name      string     `json:"name"`
	CreatedAt time.Time  `json:"created_at"`
	Status    string     `json:"status,omitempty"`   // once ended
	EndedAt   *time.Time `json:"ended_at,omitempty"` // once ended
	Steps     []stepJSON `json:"steps"`
}

type stepJSON struct {
	Name    string   `json:"name"`
	TaskID  int64    `json:"task_id"`
	Status  string   `json:"status"`
	Waiting bool     `json:"waiting"`
	After   []string `json:"after"`
	// RunOnFailureOf names the parents whose failure lets the step run.
	RunOnFailureOf []string `json:"run_on_failure_of"`
}

func newWorkflowJSON(w runtime.WorkflowInfo) workflowJSON {
	out := workflowJSON{ID: int64(w.ID), Name: w.Name, CreatedAt: w.CreatedAt, Status: string(w.Status), EndedAt: endedAt(w.EndedAt),
		Steps: make([]stepJSON, len(w.Steps))}
	for i, s := range w.Steps {
		after := s.After
		if after == nil {
			after = []string{}
		}
		lenient := s.RunOnFailureOf
		if lenient == nil {
			lenient = []string{}
		}
		out.Steps[i] = stepJSON{Name: s.Name, TaskID: int64(s.TaskID), Status: string(s.Status), Waiting: s.Waiting, After: after, RunOnFailureOf: lenient}
	}
	return out
}
