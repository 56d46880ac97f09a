package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
)

// pgxTx is the transaction type of River's pgx driver.
type pgxTx = pgx.Tx

// StampArgs is the latency run's job: it carries its insert instant.
type StampArgs struct {
	SentNS int64 `json:"sent_ns"`
	Count  bool  `json:"count"` // false during the warm-up
}

// Kind names the job kind.
func (StampArgs) Kind() string { return "stamp" }

// stampWorker records, for each counted job, how long after its insert it
// started.
type stampWorker struct {
	river.WorkerDefaults[StampArgs]
	mu    *sync.Mutex
	waits *[]time.Duration
	done  chan struct{}
	want  int
}

func (w stampWorker) Work(_ context.Context, job *river.Job[StampArgs]) error {
	if !job.Args.Count {
		return nil
	}
	wait := time.Since(time.Unix(0, job.Args.SentNS))
	w.mu.Lock()
	defer w.mu.Unlock()
	*w.waits = append(*w.waits, wait)
	if len(*w.waits) == w.want {
		close(w.done)
	}
	return nil
}

// latency starts a worker process on the scratch database, inserts jobs
// at o.rate from this process, and prints the insert-to-start percentiles
// the worker measured.
func latency(ctx context.Context, o options, pool *pgxpool.Pool, dbURL string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	want := o.rate * int(o.measure/time.Second)
	cmd := exec.Command(exe, "-mode", "latency-worker", "-database", dbURL, "-workers", strconv.Itoa(o.workers),
		"-fetch-cooldown", o.fetchCooldown.String(), "-fetch-poll", o.fetchPoll.String(), "-jobs", strconv.Itoa(want))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer cmd.Process.Kill() //nolint:errcheck // ends a worker that failed
	lines := bufio.NewScanner(out)
	if !lines.Scan() || lines.Text() != "ready" {
		return fmt.Errorf("the latency worker did not start: %q", lines.Text())
	}
	client, err := newClient(pool, o, nil)
	if err != nil {
		return err
	}
	tick := time.NewTicker(time.Second / time.Duration(o.rate))
	defer tick.Stop()
	warm := o.rate * int(o.warmup/time.Second)
	for i := range warm + want {
		<-tick.C
		args := StampArgs{SentNS: time.Now().UnixNano(), Count: i >= warm}
		if _, err := client.Insert(ctx, args, nil); err != nil {
			return err
		}
	}
	for lines.Scan() {
		fmt.Println(lines.Text())
	}
	return cmd.Wait()
}

// latencyWorker works stamp jobs on the parent's database until it has
// measured -jobs of them, then prints their percentiles.
func latencyWorker(ctx context.Context, o options) error {
	pool, err := pgxpool.New(ctx, o.database)
	if err != nil {
		return err
	}
	defer pool.Close()
	var mu sync.Mutex
	var waits []time.Duration
	done := make(chan struct{})
	workers := river.NewWorkers()
	river.AddWorker(workers, stampWorker{mu: &mu, waits: &waits, done: done, want: o.jobs})
	client, err := newClient(pool, o, workers)
	if err != nil {
		return err
	}
	if err := client.Start(ctx); err != nil {
		return err
	}
	time.Sleep(time.Second) // its LISTEN and first fetch
	fmt.Println("ready")
	select {
	case <-done:
	case <-time.After(5 * time.Minute):
		return fmt.Errorf("only %d of %d jobs started in 5 minutes", len(waits), o.jobs)
	}
	stop, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	_ = client.Stop(stop)
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(waits)
	var parts []string
	for _, q := range []float64{.50, .90, .99} {
		p := waits[min(len(waits)-1, int(q*float64(len(waits))))]
		parts = append(parts, fmt.Sprintf("latency-p%.0f\t%.3f", q*100, float64(p.Microseconds())/1000))
	}
	fmt.Println(strings.Join(parts, "\n"))
	return nil
}
