package gen

import (
	"go/token"
	"slices"
)

// Package is one Go package's annotated tasks, with every Go name the
// emitters need computed once.
type Package struct {
	Name      string // Go package name
	Path      string // import path
	Dir       string
	Tasks     []*Task     // in source order
	Workflows []*Workflow // in source order
}

// handledNoun names what Register wires: tasks, and workflow steps when
// the package has workflows.
func (p *Package) handledNoun() string {
	if len(p.Workflows) > 0 {
		return "task and workflow step"
	}
	return "task"
}

// Task is one annotated payload type.
type Task struct {
	TypeName string // the payload type, e.g. ImportPayload
	GoName   string // the task's Go name, e.g. Import
	Name     string // the task type stored in the database, e.g. import
	Doc      string // the payload's doc comment, without directives
	Options  options

	// KeyField and OwnerField name the payload fields tagged
	// leasegen:"key" and leasegen:"owner" ("" when absent); the Conv flags
	// say the field's type is a named string type that needs string(...).
	KeyField, OwnerField         string
	KeyNeedsConv, OwnerNeedsConv bool
	// ConcurrencyKeyField names the field tagged
	// leasegen:"concurrency_key" ("" when absent).
	ConcurrencyKeyField     string
	ConcurrencyKeyNeedsConv bool
	// ResultType is the type the handler returns (result=T), "" for none.
	ResultType string

	Pos token.Position
}

// The Go names emitted for a task.
func (t *Task) ConstName() string        { return "Task" + t.GoName }
func (t *Task) EnqueueName() string      { return "Enqueue" + t.GoName }
func (t *Task) EnqueueTxName() string    { return "Enqueue" + t.GoName + "Tx" }
func (t *Task) EnqueueBatchName() string { return "Enqueue" + t.GoName + "Batch" }
func (t *Task) EnqueueBatchTxName() string {
	return "Enqueue" + t.GoName + "BatchTx"
}
func (t *Task) RegisterName() string { return "Register" + t.GoName }
func (t *Task) HandlerName() string  { return t.GoName + "Handler" }
func (t *Task) HandleMethod() string { return "Handle" + t.GoName }
func (t *Task) RequestFunc() string  { return "new" + t.GoName + "Request" }
func (t *Task) AdapterFunc() string  { return "handle" + t.GoName }
func (t *Task) WaitName() string     { return "Wait" + t.GoName }

// Workflow is one //leasegen:workflow struct: each field is a step whose
// payload is the field's type, run after the steps its after tag names.
type Workflow struct {
	TypeName string // the struct, e.g. Onboard
	Name     string // the workflow name stored, e.g. onboard
	Doc      string
	Steps    []*Step // in field order
	Pos      token.Position
}

// Step is one field of a workflow.
type Step struct {
	Field    string   // the field's name: the step's name in the workflow
	TypeName string   // the payload type, declared in the package
	Name     string   // the step's task type, e.g. onboard.verify
	After    []string // its parents' field names
	// ResultType is the type the step's handler returns (result:"T"), ""
	// for none.
	ResultType string
	// FanOut says the field is a runtime.FanOut[TypeName]: a step per
	// element of the list its only parent's handler returns.
	FanOut bool
	// Options are the step's leasegen tag: the task options that apply to
	// a step. RunOnParentFailure (run_on_parent_failure) lets the failure
	// of any parent run the step, RunOnFailureOf
	// (run_on_parent_failure=A,B) the failure of those named.
	Options            options
	RunOnParentFailure bool
	RunOnFailureOf     []string
	Pos                token.Position
	wf                 *Workflow
}

// The Go names emitted for a workflow.
func (w *Workflow) ConstName() string   { return "Workflow" + w.TypeName }
func (w *Workflow) RunName() string     { return w.TypeName + "Run" }
func (w *Workflow) EnqueueName() string { return "Enqueue" + w.TypeName }
func (w *Workflow) EnqueueTxName() string {
	return "Enqueue" + w.TypeName + "Tx"
}
func (w *Workflow) WaitName() string     { return "Wait" + w.TypeName }
func (w *Workflow) HandlerName() string  { return w.TypeName + "Handler" }
func (w *Workflow) RegisterName() string { return "Register" + w.TypeName }
func (w *Workflow) BuildFunc() string    { return "new" + w.TypeName + "Workflow" }

// The Go names emitted for a step.
// step returns w's step of field name, nil for none.
func (w *Workflow) step(name string) *Step {
	for _, s := range w.Steps {
		if s.Field == name {
			return s
		}
	}
	return nil
}

// fanOut returns the fan-out step that s returns the payloads of, nil
// for none.
func (s *Step) fanOut() *Step {
	for _, f := range s.wf.Steps {
		if f.FanOut && f.After[0] == s.Field {
			return f
		}
	}
	return nil
}

// lenient reports whether the failure of s's parent p lets s run.
func (s *Step) lenient(p string) bool {
	return s.RunOnParentFailure || slices.Contains(s.RunOnFailureOf, p)
}

// runtimeLenient names the stored parents whose failure lets s run.
func (s *Step) runtimeLenient() []string { return s.stored(s.RunOnFailureOf) }

// runtimeAfter names the steps s runs after in the stored workflow.
func (s *Step) runtimeAfter() []string { return s.stored(s.After) }

// stored maps names of steps of s's workflow to the stored steps they
// stand for, once each: a fan-out's steps do not exist at enqueue, and
// the parent that spawns them stands for them (a step after it waits for
// all it spawns).
func (s *Step) stored(names []string) []string {
	var out []string
	for _, name := range names {
		if p := s.wf.step(name); p.FanOut {
			name = p.After[0]
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

func (s *Step) ConstName() string    { return "Task" + s.wf.TypeName + s.Field }
func (s *Step) HandleMethod() string { return "Handle" + s.wf.TypeName + s.Field }
func (s *Step) InputsName() string   { return s.wf.TypeName + s.Field + "Inputs" }
func (s *Step) AdapterFunc() string  { return "handle" + s.wf.TypeName + s.Field }
