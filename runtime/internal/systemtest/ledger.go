package systemtest

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/leasegen/leasegen/runtime"
)

// Interval is one execution of a handler as the test's Ledger saw it: the
// handler's own start and end, not anything the runtime reports.
type Interval struct {
	Task    runtime.TaskID
	Type    string
	Attempt int
	Owner   string
	Key     string // the task's concurrency key
	Start   time.Time
	End     time.Time // zero while running (or when its process was killed)
	// Claimed is when the claim started the execution, on the database's
	// clock (Task.StartedAt): the instant rate limits count.
	Claimed time.Time
}

// Ledger collects the intervals of one process's handlers.
type Ledger struct {
	mu   sync.Mutex
	rows []Interval
}

func (l *Ledger) Start(t *runtime.Task, owner string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rows = append(l.rows, Interval{Task: t.ID, Type: t.Type, Attempt: t.Attempt, Owner: owner, Key: t.ConcurrencyKey,
		Start: time.Now(), Claimed: t.StartedAt})
	return len(l.rows) - 1
}

func (l *Ledger) End(i int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rows[i].End = time.Now()
}

// EndIfFailed ends execution i when err is not nil and nothing ended it
// yet, and returns err. A handler calls it with its commit's error: a
// commit that failed (fenced out after a stall let the lease lapse, or cut
// off) ends the execution too, and the task runs again.
func (l *Ledger) EndIfFailed(i int, err error) error {
	if err == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.rows[i].End.IsZero() {
		l.rows[i].End = time.Now()
	}
	return err
}

func (l *Ledger) Intervals() []Interval {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.rows)
}

// LongestPause is the longest time in [from, to] in which no execution of
// an owner that counts (nil: every owner) started, up to the ledger's last
// start: a run that ended within the window did not pause after it. It is
// how long a fault stopped the work.
func (l *Ledger) LongestPause(from, to time.Time, counts func(owner string) bool) time.Duration {
	rows := l.Intervals()
	var last time.Time
	for _, iv := range rows {
		if iv.Start.After(last) {
			last = iv.Start
		}
	}
	if last.Before(to) {
		to = last
	}
	starts := []time.Time{from, to}
	for _, iv := range rows {
		if (counts == nil || counts(iv.Owner)) && iv.Start.After(from) && iv.Start.Before(to) {
			starts = append(starts, iv.Start)
		}
	}
	slices.SortFunc(starts, time.Time.Compare)
	var longest time.Duration
	for i := 1; i < len(starts); i++ {
		longest = max(longest, starts[i].Sub(starts[i-1]))
	}
	return longest.Round(time.Millisecond)
}

// ledgerProblems lists executions without an end and executions of one task
// that overlap in time or whose attempts do not rise, and counts the tasks
// that ran more than once.
func ledgerProblems(rows []Interval) (problems []string, reran int) {
	byTask := map[runtime.TaskID][]Interval{}
	for _, r := range rows {
		if r.End.IsZero() {
			problems = append(problems, fmt.Sprintf("task %d attempt %d (owner %s) has no end", r.Task, r.Attempt, r.Owner))
		}
		byTask[r.Task] = append(byTask[r.Task], r)
	}
	for id, runs := range byTask {
		slices.SortFunc(runs, func(a, b Interval) int { return a.Start.Compare(b.Start) })
		for i := 1; i < len(runs); i++ {
			prev, cur := runs[i-1], runs[i]
			if cur.Start.Before(prev.End) {
				problems = append(problems, fmt.Sprintf("task %d: attempt %d (%s) started %s before attempt %d (%s) ended",
					id, cur.Attempt, cur.Owner, prev.End.Sub(cur.Start), prev.Attempt, prev.Owner))
			}
			if cur.Attempt <= prev.Attempt {
				problems = append(problems, fmt.Sprintf("task %d: attempt %d followed attempt %d: attempts must rise", id, cur.Attempt, prev.Attempt))
			}
		}
		if len(runs) > 1 {
			reran++
		}
	}
	return problems, reran
}

// CheckLedger fails t for each Ledger problem and returns the rerun count.
func CheckLedger(t *testing.T, rows []Interval) int {
	t.Helper()
	problems, reran := ledgerProblems(rows)
	for i, p := range problems {
		if i == 20 {
			t.Errorf("... and %d more", len(problems)-i)
			break
		}
		t.Error(p)
	}
	return reran
}

// maxRunning sweeps the intervals and returns the most that ran at once, in
// total and per task type.
func maxRunning(rows []Interval) (total int, byType map[string]int) {
	return peakBy(rows, func(Interval) string { return "" })[""], peakBy(rows, func(r Interval) string { return r.Type })
}

// peakBy sweeps the intervals and returns the most that ran at once in
// each group that group puts them in.
func peakBy(rows []Interval, group func(Interval) string) map[string]int {
	type event struct {
		at    time.Time
		delta int
		group string
	}
	events := make([]event, 0, 2*len(rows))
	for _, r := range rows {
		g := group(r)
		events = append(events, event{r.Start, 1, g}, event{r.End, -1, g})
	}
	// Ends before starts at the same instant: touching intervals do not overlap.
	slices.SortFunc(events, func(a, b event) int { return cmp.Or(a.at.Compare(b.at), cmp.Compare(a.delta, b.delta)) })
	peak, now := map[string]int{}, map[string]int{}
	for _, e := range events {
		now[e.group] += e.delta
		peak[e.group] = max(peak[e.group], now[e.group])
	}
	return peak
}

// busiestWindow returns, by group, the most executions whose claims fall
// in one window [t, t+window) on the database's clock, and the first
// instant of such a window.
func busiestWindow(rows []Interval, window time.Duration, group func(Interval) string) (most map[string]int, at map[string]time.Time) {
	claims := map[string][]time.Time{}
	for _, r := range rows {
		g := group(r)
		claims[g] = append(claims[g], r.Claimed)
	}
	most, at = map[string]int{}, map[string]time.Time{}
	for g, ts := range claims {
		slices.SortFunc(ts, time.Time.Compare)
		j := 0
		for i := range ts {
			for !ts[i].Before(ts[j].Add(window)) {
				j++
			}
			if n := i - j + 1; n > most[g] {
				most[g], at[g] = n, ts[j]
			}
		}
	}
	return most, at
}
