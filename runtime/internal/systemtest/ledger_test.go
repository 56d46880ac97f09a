package systemtest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/leasegen/leasegen/runtime"
)

func TestLedgerChecksCanFail(t *testing.T) {
	base := time.Now()
	at := func(ms int) time.Time { return base.Add(time.Duration(ms) * time.Millisecond) }
	rows := []Interval{
		{Task: 1, Type: "a", Attempt: 1, Start: at(0), End: at(10)},
		{Task: 1, Type: "a", Attempt: 2, Start: at(5), End: at(20)},
		{Task: 2, Type: "b", Attempt: 1, Start: at(10), End: at(30)},
	}
	if problems, _ := ledgerProblems(rows); len(problems) != 1 {
		t.Errorf("problems = %q, want the one overlap", problems)
	}
	total, byType := maxRunning(rows)
	if want := fmt.Sprint(2, map[string]int{"a": 2, "b": 1}); fmt.Sprint(total, byType) != want {
		t.Errorf("maxRunning = %d %v, want %s", total, byType, want)
	}
}

// busiestWindow counts claims in half-open windows: claims a window
// apart fall in two.
func TestBusiestWindowCanFail(t *testing.T) {
	base := time.Now()
	at := func(ms int) time.Time { return base.Add(time.Duration(ms) * time.Millisecond) }
	rows := []Interval{
		{Key: "a", Claimed: at(0)}, {Key: "a", Claimed: at(40)}, {Key: "a", Claimed: at(100)},
		{Key: "b", Claimed: at(0)}, {Key: "b", Claimed: at(99)}, {Key: "b", Claimed: at(99)},
	}
	most, first := busiestWindow(rows, 100*time.Millisecond, func(r Interval) string { return r.Key })
	if most["a"] != 2 || most["b"] != 3 || !first["b"].Equal(at(0)) {
		t.Errorf("busiest windows = %v from %v, want a: 2, b: 3 from the start", most, first)
	}
}

func TestLedgerEndIfFailed(t *testing.T) {
	var l Ledger
	task := &runtime.Task{ID: 1, Type: "a", Attempt: 1}
	ok, failed, committed := l.Start(task, "w"), l.Start(task, "w"), l.Start(task, "w")
	l.End(committed)
	endedAt := l.Intervals()[committed].End
	failure := errors.New("fenced out")
	if err := l.EndIfFailed(ok, nil); err != nil {
		t.Errorf("EndIfFailed(nil) = %v", err)
	}
	if err := l.EndIfFailed(failed, failure); err != failure {
		t.Errorf("EndIfFailed(err) = %v, want %v", err, failure)
	}
	_ = l.EndIfFailed(committed, failure)
	rows := l.Intervals()
	if !rows[ok].End.IsZero() || rows[failed].End.IsZero() || !rows[committed].End.Equal(endedAt) {
		t.Errorf("ends = %v, %v, %v: want open, ended, ended at %v", rows[ok].End, rows[failed].End, rows[committed].End, endedAt)
	}
}
