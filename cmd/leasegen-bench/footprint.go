package main

import (
	"context"
	"fmt"
	"strings"
	"time"
)

const (
	footprintRunning  = 1000
	footprintQueued   = 100000
	footprintInterval = 500 * time.Millisecond
)

const heartbeatName = "heartbeat statements per worker per interval, 1,000 running"

// footprint has a worker process hold 1,000 sleeping tasks with 100,000
// more queued, and reads its resident memory; on MySQL it also counts the
// statements the worker sends per heartbeat interval (its poller is idle
// with every slot taken, and its recovery interval is long).
func footprint(ctx context.Context, s *scratch, t *table) error {
	if err := queue(ctx, s, "sleep", footprintRunning+footprintQueued); err != nil {
		return err
	}
	c, err := startChild(s, "worker", "-child-id", "footprint", "-child-type", "sleep", "-child-handler", "sleep",
		"-child-slots", fmt.Sprint(footprintRunning), "-child-hold", fmt.Sprint(footprintRunning),
		"-child-lease", "5s", "-child-heartbeat", footprintInterval.String(), "-child-recovery", "1h")
	if err != nil {
		return err
	}
	defer c.stop() //nolint:errcheck // the figures are taken
	if _, err := c.expect("ready", 30*time.Second); err != nil {
		return err
	}
	line, err := c.expect("holding", time.Minute)
	if err != nil {
		return err
	}
	var held, rss int64
	if _, err := fmt.Sscanf(strings.TrimPrefix(line, "holding "), "%d rss_kb=%d", &held, &rss); err != nil {
		return fmt.Errorf("footprint: %q: %w", line, err)
	}
	t.add("worker RSS, 1,000 running and 100,000 queued", "MB", float64(rss)/1024)
	if s.kind != kindMySQL {
		return nil
	}
	const intervals = 10
	before, err := questions(ctx, s.db)
	if err != nil {
		return err
	}
	time.Sleep(intervals * footprintInterval)
	after, err := questions(ctx, s.db)
	if err != nil {
		return err
	}
	t.add(heartbeatName, "stmts", float64(after-before-1)/intervals)
	return nil
}
