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

// progress samples the demo's tasks through the client and shows one refreshing line on a
// terminal, or a line every two seconds elsewhere.
type progress struct {
	client      *runtime.Client
	first, last runtime.TaskID
	tty         bool
	started     time.Time
	lastShown   time.Time
	prevDone    int
	prevAt      time.Time
	rate        float64
}

func newProgress(client *runtime.Client, first, last runtime.TaskID) *progress {
	info, err := os.Stdout.Stat()
	tty := err == nil && info.Mode()&os.ModeCharDevice != 0
	now := time.Now()
	return &progress{client: client, first: first, last: last, tty: tty, started: now, prevAt: now}
}

// recoveredKey counts, in statusCounts, the tasks whose lease expired;
// ticksKey the reconcile schedule's ticks so far (outside first..last).
const (
	recoveredKey runtime.Status = "recovered"
	ticksKey     runtime.Status = "ticks"
)

func (p *progress) sample(ctx context.Context) (statusCounts, error) {
	return tally(ctx, p.client, p.first, p.last)
}

// tally counts the tasks first..last by status, and those whose lease
// expired and were recovered, through the client's list, a page at a time;
// and, from its stats, the reconcile schedule's ticks so far (outside
// first..last).
func tally(ctx context.Context, client *runtime.Client, first, last runtime.TaskID) (statusCounts, error) {
	counts := statusCounts{}
	for before := last + 1; before > first; {
		page, err := client.List(ctx, runtime.Filter{BeforeID: before, Limit: 1000})
		if err != nil {
			return nil, err
		}
		if len(page) == 0 {
			break
		}
		for _, t := range page {
			if t.ID < first {
				break
			}
			counts[t.Status]++
			if strings.HasPrefix(t.LastError, "lease expired") {
				counts[recoveredKey]++
			}
		}
		before = page[len(page)-1].ID
	}
	stats, err := client.Stats(ctx)
	if err != nil {
		return nil, err
	}
	for _, c := range stats.Counts {
		if c.Type == billing.TaskReconcile {
			counts[ticksKey] += c.Tasks
		}
	}
	return counts, nil
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
