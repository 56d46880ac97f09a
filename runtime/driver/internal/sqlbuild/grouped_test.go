package sqlbuild

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/leasegen/leasegen/runtime/driver"
)

// The grouped statements take their placeholders from the dialect, so an
// engine with numbered ones ($1, $2, ...) gets one per argument, in order.
func TestGroupedStatementsNumberTheirPlaceholders(t *testing.T) {
	numbered := Dialect{Now: "now()", Param: func(n int) string { return "$" + strconv.Itoa(n) }}
	refs := []driver.LeaseRef{{ID: 1, Attempt: 1}, {ID: 2, Attempt: 2}, {ID: 3, Attempt: 1}}
	reqs := []driver.CompletionRequest{{Ref: refs[0], Result: "r1"}, {Ref: refs[1]}, {Ref: refs[2]}}
	for name, build := range map[string]func() (string, []any){
		"complete": func() (string, []any) { return CompleteManySQL("w1", reqs, numbered) },
		"release":  func() (string, []any) { return ReleaseUnstartedSQL("w1", refs, numbered) },
	} {
		query, args := build()
		got := regexp.MustCompile(`\$\d+`).FindAllString(query, -1)
		if len(got) != len(args) {
			t.Fatalf("%s: %d placeholders for %d arguments:\n%s", name, len(got), len(args), query)
		}
		for i, p := range got {
			if p != fmt.Sprintf("$%d", i+1) {
				t.Errorf("%s: placeholder %d is %s:\n%s", name, i+1, p, query)
			}
		}
		if regexp.MustCompile(`\?`).MatchString(query) {
			t.Errorf("%s: a ? left in a numbered dialect's statement:\n%s", name, query)
		}
	}
}

// The attempt fence names each attempt once, with its ids in the order
// they came: one group for a batch of one attempt, the usual case.
func TestAttemptFenceGroupsByAttempt(t *testing.T) {
	for _, c := range []struct {
		refs []driver.LeaseRef
		want string
		args []any
	}{
		{[]driver.LeaseRef{{ID: 1, Attempt: 1}, {ID: 2, Attempt: 1}}, "((attempt = ? AND id IN (?,?)))", []any{1, int64(1), int64(2)}},
		{[]driver.LeaseRef{{ID: 1, Attempt: 1}, {ID: 2, Attempt: 2}, {ID: 3, Attempt: 1}},
			"((attempt = ? AND id IN (?,?)) OR (attempt = ? AND id IN (?)))", []any{1, int64(1), int64(3), 2, int64(2)}},
	} {
		b := NewStatement(Dialect{Param: QuestionMark}, 0)
		WriteAttemptFence(b, c.refs)
		if b.String() != c.want {
			t.Errorf("fence of %v = %s, want %s", c.refs, b.String(), c.want)
		}
		if diff := cmp.Diff(c.args, b.Args); diff != "" {
			t.Errorf("fence of %v binds (-want +got):\n%s", c.refs, diff)
		}
	}
}
