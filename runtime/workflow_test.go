package runtime

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func step(name string, after ...string) Step {
	return Step{Name: name, Request: Request{Type: "t"}, After: after}
}

// A workflow that cannot run as declared is refused before anything is
// stored, with an error that names the problem.
func TestEnqueueWorkflowRefusesBadGraphs(t *testing.T) {
	e := newSQLiteEngine(t)
	c, err := NewClient(e, ClientConfig{})
	if err != nil {
		t.Fatal(err)
	}
	many := make([]Step, MaxWorkflowSteps+1)
	for i := range many {
		many[i] = step(strings.Repeat("s", 1+i%100) + string(rune('a'+i/100)))
	}
	for _, tc := range []struct {
		name string
		w    Workflow
		want string
	}{
		{"no name", Workflow{Steps: []Step{step("a")}}, "workflow name: empty name"},
		{"no steps", Workflow{Name: "w"}, "has 0 steps: it needs 1 to 1000"},
		{"too many steps", Workflow{Name: "w", Steps: many}, "has 1001 steps"},
		{"unnamed step", Workflow{Name: "w", Steps: []Step{step("")}}, "step 0: empty name"},
		{"duplicate step", Workflow{Name: "w", Steps: []Step{step("a"), step("a")}}, "names two steps a"},
		{"unknown parent", Workflow{Name: "w", Steps: []Step{step("a", "b")}}, `runs after "b", which is not a step of it`},
		{"itself", Workflow{Name: "w", Steps: []Step{step("a", "a")}}, "runs after itself"},
		{"parent twice", Workflow{Name: "w", Steps: []Step{step("a"), step("b", "a", "a")}}, "names a twice"},
		{"lenient parent not after", Workflow{Name: "w", Steps: []Step{step("a"), {Name: "b", Request: Request{Type: "t"}, After: []string{"a"}, RunOnFailureOf: []string{"c"}}}},
			`runs on the failure of "c", which is not in its After`},
		{"both failure rules", Workflow{Name: "w", Steps: []Step{step("a"), {Name: "b", Request: Request{Type: "t"}, After: []string{"a"}, RunOnParentFailure: true, RunOnFailureOf: []string{"a"}}}},
			"sets RunOnParentFailure and RunOnFailureOf: set one"},
		{"cycle", Workflow{Name: "w", Steps: []Step{step("a"), step("b", "a", "d"), step("c", "b"), step("d", "c")}}, "cycle among steps b, c, d"},
		{"concurrency key", Workflow{Name: "w", Steps: []Step{{Name: "a", Request: Request{Type: "t", Options: []EnqueueOption{WithConcurrencyKey("k", 1)}}}}}, "no concurrency, sequence or fairness key"},
		{"idempotency key", Workflow{Name: "w", Steps: []Step{{Name: "a", Request: Request{Type: "t", Options: []EnqueueOption{WithIdempotencyKey("k")}}}}}, "no idempotency key"},
		{"bad request", Workflow{Name: "w", Steps: []Step{{Name: "a", Request: Request{Type: "t", Payload: []byte("{")}}}}, "step a: leasegen: invalid task: t payload is not JSON"},
	} {
		_, err := c.EnqueueWorkflow(bg, tc.w)
		if !errors.Is(err, ErrInvalidTask) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want ErrInvalidTask saying %q", tc.name, err, tc.want)
		}
	}
	stats, err := c.Stats(bg)
	if err != nil || len(stats.Counts) != 0 {
		t.Errorf("refused workflows stored tasks: %+v (%v)", stats.Counts, err)
	}
}

// Steps are stored parents first, in the order given among the steps that
// are free, whatever order the workflow lists them in.
func TestCheckWorkflowOrdersParentsFirst(t *testing.T) {
	g, err := checkWorkflow(Workflow{Name: "w", Steps: []Step{step("d", "b", "c"), step("b", "a"), step("a"), step("c", "a"), step("e")}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{2, 4, 1, 3, 0}, g.order); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	// In that order a is 0, e 1, b 2, c 3, d 4.
	if diff := cmp.Diff([][]int{nil, nil, {0}, {0}, {2, 3}}, g.parents); diff != "" {
		t.Errorf("parents by place (-want +got):\n%s", diff)
	}
}

// Parents is for a step's handler: outside a worker it says so.
func TestParentsOutsideAWorker(t *testing.T) {
	if _, err := (&Task{ID: 1}).Parents(bg); !errors.Is(err, ErrInvalidTask) {
		t.Errorf("Parents outside a worker: %v, want ErrInvalidTask", err)
	}
}
