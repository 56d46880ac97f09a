package leasetest

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/leasegen/leasegen/runtime"
)

// Querier reads the task table: the engine's *sql.DB, or the *sql.Tx
// that enqueued tasks it has not committed.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
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

// readTasks reads every stored task, in id order. The statement has no
// placeholder, so it runs on every engine.
func readTasks(t testing.TB, q Querier) []row {
	t.Helper()
	rows, err := q.QueryContext(context.Background(), "SELECT id, task_type, status, payload FROM leasegen_tasks ORDER BY id")
	if err != nil {
		t.Fatalf("leasetest: read the tasks: %v", err)
	}
	defer rows.Close()
	var out []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.typ, &r.status, &r.payload); err != nil {
			t.Fatalf("leasetest: read the tasks: %v", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("leasetest: read the tasks: %v", err)
	}
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
