package gen

import "go/token"

// Package is one Go package's annotated tasks, with every Go name the
// emitters need computed once.
type Package struct {
	Name  string // Go package name
	Path  string // import path
	Dir   string
	Tasks []*Task // in source order
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
