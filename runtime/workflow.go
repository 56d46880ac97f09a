package runtime

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/leasegen/leasegen/internal/dag"
	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/internal/bookkeeping"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// Workflow is a graph of tasks that Client.EnqueueWorkflow stores in one
// transaction: each step starts only after every step it names in After
// ended (its parents), and reads their results (Task.Parents).
type Workflow struct {
	// Name is the workflow's kind ("onboard"), under the rules of a task
	// type: printable ASCII without spaces, at most 128 bytes.
	Name  string
	Steps []Step
}

// Step is one task of a Workflow.
type Step struct {
	// Name is unique in the workflow, under the rules of a task type.
	Name    string
	Request Request
	// After names the step's parents: it starts once each of them ended.
	After []string
	// RunOnParentFailure lets the step run after a parent that ended
	// without success (FAILED or CANCELLED; its status is in
	// Task.Parents). Without it such a parent cancels the step, and the
	// step's own dependants in turn.
	RunOnParentFailure bool
	// RunOnFailureOf names the parents, of After, whose end without
	// success lets the step run; the others' cancels it. It is the rule
	// per edge, where RunOnParentFailure is the rule for every parent:
	// set one of them.
	RunOnFailureOf []string
}

// runsOnFailureOf reports whether s runs after parent ended without
// success.
func (s Step) runsOnFailureOf(parent string) bool {
	return s.RunOnParentFailure || slices.Contains(s.RunOnFailureOf, parent)
}

// MaxWorkflowSteps bounds the steps of one workflow.
const MaxWorkflowSteps = 1000

// WorkflowID identifies a stored workflow.
type WorkflowID = leasetype.WorkflowID

// WorkflowInfo is a stored workflow with its steps (Client.Workflow).
type WorkflowInfo = leasetype.WorkflowInfo

// StepInfo is one step of a WorkflowInfo.
type StepInfo = leasetype.StepInfo

// ParentResult is a step's parent as its handler reads it (Task.Parents).
type ParentResult = leasetype.ParentResult

// ErrWorkflowNotFound reports an id that names no workflow.
var ErrWorkflowNotFound = leasetype.ErrWorkflowNotFound

// WorkflowRun is a stored workflow: its id, and its steps' tasks by name.
type WorkflowRun struct {
	ID    WorkflowID
	Tasks map[string]TaskID
}

// EnqueueWorkflow checks w (unique step names, known parents, no cycle)
// and stores its steps in one transaction: those without parents are
// queued, the others wait for their parents. The client's middleware sees
// the steps' requests as one batch.
func (c *Client) EnqueueWorkflow(ctx context.Context, w Workflow) (WorkflowRun, error) {
	run, err := c.enqueueWorkflow(ctx, c.engine.db, w)
	if err != nil {
		return WorkflowRun{}, err
	}
	notified := map[string]bool{}
	for _, s := range w.Steps {
		if len(s.After) == 0 && !notified[s.Request.Type] {
			notified[s.Request.Type] = true
			c.engine.driver.Notify(s.Request.Type)
		}
	}
	return run, nil
}

// EnqueueWorkflowTx is EnqueueWorkflow inside the caller's transaction:
// the workflow exists exactly when tx commits.
func (c *Client) EnqueueWorkflowTx(ctx context.Context, tx *sql.Tx, w Workflow) (WorkflowRun, error) {
	return c.enqueueWorkflow(ctx, tx, w)
}

func (c *Client) enqueueWorkflow(ctx context.Context, q driver.DBTX, w Workflow) (WorkflowRun, error) {
	graph, err := checkWorkflow(w)
	if err != nil {
		return WorkflowRun{}, err
	}
	reqs := make([]Request, len(graph.order))
	for i, s := range graph.order {
		reqs[i] = w.Steps[s].Request
	}
	store := func(ctx context.Context, reqs []Request) ([]TaskID, error) {
		return c.storeWorkflow(ctx, q, w, graph, reqs)
	}
	ids, err := c.chain(store)(ctx, reqs)
	if err != nil {
		return WorkflowRun{}, err
	}
	run := WorkflowRun{ID: graph.id, Tasks: make(map[string]TaskID, len(ids))}
	for i, s := range graph.order {
		run.Tasks[w.Steps[s].Name] = ids[i]
	}
	return run, nil
}

// storeWorkflow validates the steps' requests, in graph's order, and
// stores the workflow on q; it sets graph.id.
func (c *Client) storeWorkflow(ctx context.Context, q driver.DBTX, w Workflow, graph *workflowGraph, reqs []Request) ([]TaskID, error) {
	if len(reqs) != len(graph.order) {
		return nil, fmt.Errorf("%w: workflow %s: the enqueue middleware passed on %d of its %d steps", ErrInvalidTask, w.Name, len(reqs), len(graph.order))
	}
	b := bookkeeping.WorkflowBatch{Name: w.Name, Tasks: make([]driver.NewTask, len(reqs)), Names: make([]string, len(reqs)),
		Parents: graph.parents, RunOnFailure: make([][]bool, len(reqs))}
	var parentTypes []string // of the steps that have children
	for i, r := range reqs {
		s := w.Steps[graph.order[i]]
		t, err := c.stepTask(r)
		if err != nil {
			return nil, fmt.Errorf("workflow %s, step %s: %w", w.Name, s.Name, err)
		}
		b.Tasks[i], b.Names[i] = t, s.Name
		for _, p := range graph.parents[i] {
			b.RunOnFailure[i] = append(b.RunOnFailure[i], s.runsOnFailureOf(w.Steps[graph.order[p]].Name))
			parentTypes = append(parentTypes, reqs[p].Type)
		}
	}
	b.ParentTypes = c.engine.parents.unknown(parentTypes)
	if err := c.checkBeforeInsert(ctx, b.Tasks); err != nil {
		return nil, err
	}
	tables := c.engine.tables
	if tx, ok := q.(*sql.Tx); ok {
		tables = c.engine.driver.TablesIn(tx)
	}
	id, ids, err := bookkeeping.InsertWorkflow(ctx, tables, b)
	if err != nil {
		return nil, c.engine.classifyWrite(err)
	}
	graph.id = id
	c.engine.parents.add(b.ParentTypes...)
	c.countEnqueued(b.Tasks)
	c.engine.observer.WorkflowStarted(w.Name)
	return ids, nil
}

// WorkflowSummary is a stored workflow with its steps counted
// (Client.Workflows).
type WorkflowSummary = leasetype.WorkflowSummary

// Workflows lists up to limit workflows, newest first, with their steps
// counted by state.
func (c *Client) Workflows(ctx context.Context, limit int) ([]WorkflowSummary, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("%w: Workflows limit must be positive, got %d", ErrInvalidConfig, limit)
	}
	list, err := c.engine.tables.WorkflowList(ctx, limit)
	if err != nil {
		return nil, c.engine.failed(err, "list workflows")
	}
	return list, nil
}

// stepTask checks a step's request under c's rules: what Enqueue takes,
// without a concurrency or idempotency key.
func (c *Client) stepTask(r Request) (driver.NewTask, error) {
	t, key, err := c.newTask(r)
	switch {
	case err != nil:
		return driver.NewTask{}, err
	case key.Key != "":
		return driver.NewTask{}, fmt.Errorf("%w: a step takes no concurrency, sequence or fairness key", ErrInvalidTask)
	case t.Key != "":
		return driver.NewTask{}, fmt.Errorf("%w: a step takes no idempotency key (a workflow's enqueue is one transaction: enqueue it in yours, EnqueueWorkflowTx, to make it once)", ErrInvalidTask)
	}
	return t, nil
}

// Workflow returns workflow id with its steps, or ErrWorkflowNotFound.
func (c *Client) Workflow(ctx context.Context, id WorkflowID) (WorkflowInfo, error) {
	w, err := c.engine.tables.WorkflowGet(ctx, id)
	if errors.Is(err, ErrWorkflowNotFound) {
		return WorkflowInfo{}, err
	}
	if err != nil {
		return WorkflowInfo{}, c.engine.failed(err, "read workflow %d", id)
	}
	return w, nil
}

// Parents returns the task's parents in its workflow, by step name, with
// their statuses and results: none for a task outside a workflow, or a
// step without parents.
func (t *Task) Parents(ctx context.Context) ([]ParentResult, error) {
	if t.exec == nil {
		return nil, fmt.Errorf("%w: Parents called outside a worker", ErrInvalidTask)
	}
	parents, err := t.exec.x.tables.StepParents(ctx, t.ID)
	if err != nil {
		return nil, t.exec.x.failed(err, "read the parents of task %d", t.ID)
	}
	return parents, nil
}

// workflowGraph is a checked workflow: its steps in an order where each
// comes after its parents (indexes into Workflow.Steps), and each ordered
// step's parents as indexes into that order.
type workflowGraph struct {
	order   []int
	parents [][]int
	id      WorkflowID // once stored
}

// checkWorkflow checks w's names and edges and orders its steps.
func checkWorkflow(w Workflow) (*workflowGraph, error) {
	if problem := taskTypeProblem(w.Name); problem != "" {
		return nil, fmt.Errorf("%w: workflow name: %s", ErrInvalidTask, strings.Replace(problem, "task type", "name", 1))
	}
	if len(w.Steps) == 0 || len(w.Steps) > MaxWorkflowSteps {
		return nil, fmt.Errorf("%w: workflow %s has %d steps: it needs 1 to %d", ErrInvalidTask, w.Name, len(w.Steps), MaxWorkflowSteps)
	}
	index := make(map[string]int, len(w.Steps))
	for i, s := range w.Steps {
		if problem := taskTypeProblem(s.Name); problem != "" {
			return nil, fmt.Errorf("%w: workflow %s, step %d: %s", ErrInvalidTask, w.Name, i, strings.Replace(problem, "task type", "name", 1))
		}
		if _, dup := index[s.Name]; dup {
			return nil, fmt.Errorf("%w: workflow %s names two steps %s", ErrInvalidTask, w.Name, s.Name)
		}
		index[s.Name] = i
	}
	parents := make([][]int, len(w.Steps)) // by step index
	for i, s := range w.Steps {
		seen := map[string]bool{}
		for _, p := range s.After {
			j, ok := index[p]
			switch {
			case !ok:
				return nil, fmt.Errorf("%w: workflow %s, step %s runs after %q, which is not a step of it", ErrInvalidTask, w.Name, s.Name, p)
			case j == i:
				return nil, fmt.Errorf("%w: workflow %s, step %s runs after itself", ErrInvalidTask, w.Name, s.Name)
			case seen[p]:
				return nil, fmt.Errorf("%w: workflow %s, step %s names %s twice in After", ErrInvalidTask, w.Name, s.Name, p)
			}
			seen[p] = true
			parents[i] = append(parents[i], j)
		}
		for _, p := range s.RunOnFailureOf {
			switch {
			case s.RunOnParentFailure:
				return nil, fmt.Errorf("%w: workflow %s, step %s sets RunOnParentFailure and RunOnFailureOf: set one", ErrInvalidTask, w.Name, s.Name)
			case !seen[p]:
				return nil, fmt.Errorf("%w: workflow %s, step %s runs on the failure of %q, which is not in its After", ErrInvalidTask, w.Name, s.Name, p)
			}
		}
	}
	order, cyclic := dag.Order(parents)
	if cyclic != nil {
		names := make([]string, len(cyclic))
		for k, i := range cyclic {
			names[k] = w.Steps[i].Name
		}
		return nil, fmt.Errorf("%w: workflow %s has a cycle among steps %s: a step cannot wait for itself", ErrInvalidTask, w.Name, strings.Join(names, ", "))
	}
	g := &workflowGraph{order: order}
	at := make([]int, len(w.Steps)) // a step's place in the order
	for k, i := range order {
		at[i] = k
	}
	g.parents = make([][]int, len(g.order))
	for k, i := range g.order {
		for _, p := range parents[i] {
			g.parents[k] = append(g.parents[k], at[p])
		}
	}
	return g, nil
}

// CancelWorkflow cancels every step of workflow id that has not ended, as
// Cancel does (a queued or waiting step at once, a running one asked to
// stop), and returns how many steps it cancelled or asked to stop.
func (c *Client) CancelWorkflow(ctx context.Context, id WorkflowID) (int, error) {
	w, err := c.Workflow(ctx, id)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, s := range w.Steps {
		if s.Status == "" || s.Status.Terminal() || s.Status == StatusCancelRequested {
			continue
		}
		err := c.Cancel(ctx, s.TaskID)
		switch {
		case err == nil:
			n++
		case errors.Is(err, ErrTaskFinished) || errors.Is(err, ErrTaskNotFound):
			// it ended, or a cascade cancelled it, since the read
		default:
			return n, err
		}
	}
	return n, nil
}

// WaitWorkflow blocks, as Wait does for a task, until every step of
// workflow id has ended, the steps its steps spawned included, and returns
// a *TaskEndedError (errors.Is ErrTaskNotSucceeded) for the first step, by
// name, that did not succeed: what the generated WaitX methods call.
func (c *Client) WaitWorkflow(ctx context.Context, id WorkflowID) error {
	for {
		w, err := c.Workflow(ctx, id)
		if err != nil {
			return err
		}
		// A step whose task is gone (Status "") has ended too.
		i := slices.IndexFunc(w.Steps, func(s StepInfo) bool { return s.Status != "" && !s.Status.Terminal() })
		if i >= 0 {
			if _, err := c.Wait(ctx, w.Steps[i].TaskID); err != nil {
				return err
			}
			continue // a step may have spawned others meanwhile
		}
		for _, s := range w.Steps {
			if s.Status == StatusSuccess {
				continue
			}
			info, err := c.Get(ctx, s.TaskID)
			if err != nil {
				return fmt.Errorf("workflow %d, step %s: %w", id, s.Name, err)
			}
			return &TaskEndedError{Task: info}
		}
		return nil
	}
}
