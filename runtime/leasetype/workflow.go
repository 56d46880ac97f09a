package leasetype

import (
	"errors"
	"strings"
	"time"
)

// WorkflowID identifies a stored workflow.
type WorkflowID int64

// WorkflowInfo is a stored workflow with its steps, as operators see it.
type WorkflowInfo struct {
	ID        WorkflowID
	Name      string
	CreatedAt time.Time
	// Status is SUCCESS (every step succeeded), FAILED (a step failed) or
	// CANCELLED once a recovery pass found every step ended, and EndedAt
	// the last step's end; "" and zero before.
	Status  Status
	EndedAt time.Time
	Steps   []StepInfo // by name
}

// WorkflowSummary is a stored workflow with its steps counted, as
// Client.Workflows lists it.
type WorkflowSummary struct {
	ID        WorkflowID
	Name      string
	CreatedAt time.Time
	// Steps counts the stored steps; Succeeded those that succeeded and
	// Failed those that ended FAILED or CANCELLED.
	Steps, Succeeded, Failed int
	// Status and EndedAt are WorkflowInfo's: set once a recovery pass
	// found every step ended.
	Status  Status
	EndedAt time.Time
}

// State is "failed" when a step failed or was cancelled, "succeeded" when
// every step did, else "running".
func (w WorkflowSummary) State() string {
	switch {
	case w.Failed > 0:
		return "failed"
	case w.Succeeded == w.Steps:
		return "succeeded"
	}
	return "running"
}

// StepInfo is one step of a workflow.
type StepInfo struct {
	Name   string
	TaskID TaskID
	// Status is the step's task's; empty once the task was purged or
	// discarded.
	Status Status
	// Waiting says the step's parents have not all ended yet (or they
	// have, and the step is about to be queued or cancelled).
	Waiting bool
	// After names the step's parents, and RunOnFailureOf those of them
	// whose end without success lets it run (the others' cancels it).
	After          []string
	RunOnFailureOf []string
}

// OnParentFailure says what a parent that ends without success does to
// the step: "-" without parents, "runs" when each lets it run,
// "cancelled" when each cancels it, else "runs after A's, cancelled by
// the others'" naming those that let it run.
func (s StepInfo) OnParentFailure() string {
	switch {
	case len(s.After) == 0:
		return "-"
	case len(s.RunOnFailureOf) == len(s.After):
		return "runs"
	case len(s.RunOnFailureOf) == 0:
		return "cancelled"
	}
	return "runs after " + strings.Join(s.RunOnFailureOf, "'s, ") + "'s, cancelled by the others'"
}

// ParentResult is a step's parent as the step's handler reads it
// (Task.Parents).
type ParentResult struct {
	Step   string
	TaskID TaskID
	// Status is the parent's task's: SUCCESS, or FAILED or CANCELLED for a
	// step that runs on its parents' failure; empty once the task is gone.
	Status Status
	Result string // what the parent's handler set (Task.SetResult)
}

// ErrWorkflowNotFound reports an id that names no workflow.
var ErrWorkflowNotFound = errors.New("leasegen: workflow not found")
