package drivertest

import (
	"fmt"
	"testing"
	"time"
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
