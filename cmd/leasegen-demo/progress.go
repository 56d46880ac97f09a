package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/testdata/example/billing"
)

// statusCounts counts the demo's tasks by status.
type statusCounts map[runtime.Status]int

func (c statusCounts) finished() int {
	return c[runtime.StatusSuccess] + c[runtime.StatusFailed] + c[runtime.StatusCancelled]
}

// progress samples the task table and shows one refreshing line on a
// terminal, or a line every two seconds elsewhere.
type progress struct {
	engine      *runtime.Engine
	q           func(string) string // the demo's statements in the engine's placeholders
	first, last runtime.TaskID
	tty         bool
	started     time.Time
	lastShown   time.Time
	prevDone    int
	prevAt      time.Time
	rate        float64
}

func newProgress(engine *runtime.Engine, q func(string) string, first, last runtime.TaskID) *progress {
	info, err := os.Stdout.Stat()
	tty := err == nil && info.Mode()&os.ModeCharDevice != 0
	now := time.Now()
	return &progress{engine: engine, q: q, first: first, last: last, tty: tty, started: now, prevAt: now}
}

// recoveredKey counts, in statusCounts, the tasks whose lease expired;
// ticksKey the reconcile schedule's ticks so far (outside first..last).
const (
	recoveredKey runtime.Status = "recovered"
	ticksKey     runtime.Status = "ticks"
)

func (p *progress) sample(ctx context.Context) (statusCounts, error) {
	rows, err := p.engine.DB().QueryContext(ctx,
		p.q("SELECT status, COUNT(*) FROM leasegen_tasks WHERE id BETWEEN ? AND ? GROUP BY status"), p.first, p.last)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	counts := statusCounts{}
	for rows.Next() {
		var s runtime.Status
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			return nil, err
		}
		counts[s] = n
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var recovered int
	err = p.engine.DB().QueryRowContext(ctx, p.q("SELECT COUNT(*) FROM leasegen_tasks WHERE id BETWEEN ? AND ? AND last_error LIKE 'lease expired%'"),
		p.first, p.last).Scan(&recovered)
	counts[recoveredKey] = recovered
	if err != nil {
		return nil, err
	}
	var ticks int
	err = p.engine.DB().QueryRowContext(ctx, p.q("SELECT COUNT(*) FROM leasegen_tasks WHERE task_type = ?"), billing.TaskReconcile).Scan(&ticks)
	counts[ticksKey] = ticks
	return counts, err
}

func (p *progress) show(c statusCounts, kills int) {
	now := time.Now()
	if dt := now.Sub(p.prevAt).Seconds(); dt >= 1 {
		p.rate = float64(c.finished()-p.prevDone) / dt
		p.prevDone, p.prevAt = c.finished(), now
	}
	line := fmt.Sprintf("%5.1fs  queued %5d  running %3d  succeeded %5d  failed %d  | %5.0f tasks/s | kills %d, recovered %d | ticks %d",
		now.Sub(p.started).Seconds(), c[runtime.StatusQueued], c[runtime.StatusRunning]+c[runtime.StatusCancelRequested],
		c[runtime.StatusSuccess], c[runtime.StatusFailed], p.rate, kills, c[recoveredKey], c[ticksKey])
	switch {
	case p.tty:
		fmt.Printf("\r\033[K%s", line)
	case now.Sub(p.lastShown) >= 2*time.Second:
		fmt.Println(line)
		p.lastShown = now
	}
}

// note prints an event on its own line.
func (p *progress) note(msg string) {
	if p.tty {
		fmt.Print("\r\033[K")
	}
	fmt.Printf("%5.1fs  %s\n", time.Since(p.started).Seconds(), msg)
}

func (p *progress) done() {
	if p.tty {
		fmt.Println()
	}
	fmt.Println(strings.Repeat("-", 78))
}
