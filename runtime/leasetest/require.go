package leasetest

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/leasegen/leasegen/runtime"
)

// Querier is where the assertions look for tasks: Committed(client), the
// stored tasks, or In(client, tx), what the transaction tx sees, with the
// tasks it enqueued and has not committed. It reads through the client,
// whatever the engine.
type Querier interface {
	tasks(ctx context.Context, f runtime.Filter) ([]runtime.TaskInfo, error)
}

// Committed looks for the tasks client's engine has stored.
func Committed(client *runtime.Client) Querier { return committed{client} }

// In looks for the tasks as the transaction tx sees them: with those it
// enqueued (EnqueueXTx) and has not committed.
func In(client *runtime.Client, tx *sql.Tx) Querier { return inTx{client, tx} }

type committed struct{ c *runtime.Client }

func (q committed) tasks(ctx context.Context, f runtime.Filter) ([]runtime.TaskInfo, error) {
	return q.c.List(ctx, f)
}

type inTx struct {
	c  *runtime.Client
	tx *sql.Tx
}

func (q inTx) tasks(ctx context.Context, f runtime.Filter) ([]runtime.TaskInfo, error) {
	return q.c.ListTx(ctx, q.tx, f)
}

// Enqueued is a stored task with its payload decoded.
type Enqueued[P any] struct {
	ID      runtime.TaskID
	Status  runtime.Status
	Payload P
}

// RequireEnqueued fails t unless a task of taskType whose payload match
// accepts is stored (in any status), and returns the first such task. A nil
// match accepts any payload. P is the payload's type: JSON payloads decode
// into it, and []byte takes them as they are.
func RequireEnqueued[P any](t testing.TB, q Querier, taskType string, match func(P) bool) Enqueued[P] {
	t.Helper()
	found, all := matching(t, q, taskType, match)
	if len(found) == 0 {
		t.Fatalf("leasetest: no task of type %q matches; %s", taskType, describe(taskType, all))
	}
	return found[0]
}

// RequireNotEnqueued fails t if a task of taskType whose payload match
// accepts is stored.
func RequireNotEnqueued[P any](t testing.TB, q Querier, taskType string, match func(P) bool) {
	t.Helper()
	if found, all := matching(t, q, taskType, match); len(found) > 0 {
		t.Fatalf("leasetest: %d tasks of type %q match, want none; %s", len(found), taskType, describe(taskType, all))
	}
}

// RequireManyEnqueued fails t unless exactly n tasks of taskType match,
// and returns them in the order they were enqueued.
func RequireManyEnqueued[P any](t testing.TB, q Querier, taskType string, n int, match func(P) bool) []Enqueued[P] {
	t.Helper()
	found, all := matching(t, q, taskType, match)
	if len(found) != n {
		t.Fatalf("leasetest: %d tasks of type %q match, want %d; %s", len(found), taskType, n, describe(taskType, all))
	}
	return found
}

// row is one stored task as the assertions read it.
type row struct {
	id      runtime.TaskID
	typ     string
	status  runtime.Status
	payload []byte
}

// matching returns the tasks of taskType that match, and every stored task
// for the failure message.
func matching[P any](t testing.TB, q Querier, taskType string, match func(P) bool) ([]Enqueued[P], []row) {
	t.Helper()
	all := readTasks(t, q)
	var found []Enqueued[P]
	for _, r := range all {
		if r.typ != taskType {
			continue
		}
		var p P
		if raw, ok := any(&p).(*[]byte); ok {
			*raw = r.payload
		} else if err := json.Unmarshal(r.payload, &p); err != nil {
			t.Fatalf("leasetest: task %d of type %q: payload %s does not decode into %T: %v", r.id, taskType, r.payload, p, err)
		}
		if match == nil || match(p) {
			found = append(found, Enqueued[P]{ID: r.id, Status: r.status, Payload: p})
		}
	}
	return found, all
}

// readTasks reads every stored task, in id order, a page at a time.
func readTasks(t testing.TB, q Querier) []row {
	t.Helper()
	var out []row
	for before := runtime.TaskID(0); ; {
		page, err := q.tasks(context.Background(), runtime.Filter{BeforeID: before, Limit: 1000})
		if err != nil {
			t.Fatalf("leasetest: read the tasks: %v", err)
		}
		for _, info := range page {
			out = append(out, row{id: info.ID, typ: info.Type, status: info.Status, payload: info.Payload})
		}
		if len(page) < 1000 {
			break
		}
		before = page[len(page)-1].ID
	}
	slices.Reverse(out) // lists are newest first
	return out
}

// describe lists what was enqueued instead: the tasks of taskType with
// their payloads, and how many of each other type.
func describe(taskType string, all []row) string {
	var same []string
	others := map[string]int{}
	var order []string
	for _, r := range all {
		if r.typ == taskType {
			same = append(same, fmt.Sprintf("  task %d (%s): %s", r.id, r.status, r.payload))
			continue
		}
		if others[r.typ] == 0 {
			order = append(order, r.typ)
		}
		others[r.typ]++
	}
	var b strings.Builder
	if len(same) == 0 {
		fmt.Fprintf(&b, "no task of type %q is stored", taskType)
	} else {
		fmt.Fprintf(&b, "stored of type %q:\n%s", taskType, strings.Join(same, "\n"))
	}
	if len(order) > 0 {
		parts := make([]string, len(order))
		for i, typ := range order {
			parts[i] = fmt.Sprintf("%q (%d)", typ, others[typ])
		}
		fmt.Fprintf(&b, "\nof other types: %s", strings.Join(parts, ", "))
	}
	return b.String()
}
