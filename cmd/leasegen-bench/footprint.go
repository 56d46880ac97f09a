package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/leasegen/leasegen/runtime"
)

// footprint holds 1,000 sleeping tasks running with 100,000 queued, then
// reports this process's resident memory and, on MySQL, the statements the
// worker sends per heartbeat interval (from the server's Questions counter).
func footprint(ctx context.Context, o options) error {
	s, err := newScratch(ctx, o)
	if err != nil {
		return err
	}
	defer s.close()
	reqs := make([]runtime.Request, 1000)
	for i := range reqs {
		reqs[i] = runtime.Request{Type: "sleep"}
	}
	for range 101 {
		if _, err := s.client.EnqueueMany(ctx, reqs); err != nil {
			return err
		}
	}
	const heartbeat = 500 * time.Millisecond
	w, err := runtime.NewWorker(s.engine, runtime.Config{
		LeaseTimeout: 5 * time.Second, HeartbeatInterval: heartbeat, MaxConcurrency: 1000, PollInterval: time.Second,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return err
	}
	release := make(chan struct{})
	if err := w.Handle("sleep", func(ctx context.Context, _ *runtime.Task) error {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	}); err != nil {
		return err
	}
	if err := w.Start(ctx); err != nil {
		return err
	}
	defer func() { close(release); _ = w.Stop(ctx) }()
	for w.Stats().Claimed < 1000 {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(time.Second)
	fmt.Printf("\nfootprint: %d running, about 100,000 queued: worker process RSS %s\n", w.Stats().Claimed, rss())
	if o.sqlite {
		fmt.Println("heartbeat: one UPDATE ... RETURNING per interval by construction (SQLite has no server counters)")
		return nil
	}
	before, err := questions(ctx, s)
	if err != nil {
		return err
	}
	const intervals = 10
	time.Sleep(intervals * heartbeat)
	after, err := questions(ctx, s)
	if err != nil {
		return err
	}
	// Two of the delta are our own SHOW STATUS queries.
	fmt.Printf("heartbeat: %.1f statements per worker per interval with 1,000 running (the whole server's Questions over %d intervals)\n",
		float64(after-before-1)/intervals, intervals)
	return nil
}

func questions(ctx context.Context, s *scratch) (int64, error) {
	var name string
	var n int64
	err := s.engine.DB().QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Questions'").Scan(&name, &n)
	return n, err
}

// rss reads this process's resident set size.
func rss() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmRSS:"))
		}
	}
	return "unknown"
}
