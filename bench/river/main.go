// Command riverbench measures River (github.com/riverqueue/river) the way
// leasegen-bench measures leasegen, on a scratch database of the same
// PostgreSQL server, so that leasegen-bench -river can put both in one
// table: the burn-down of queued no-op jobs by one process, batch inserts,
// and the insert-to-start latency from another process. It prints one
// "figure<TAB>value" line per figure.
//
//	riverbench -postgres URL -mode burn -jobs 50000 -workers 100
//	riverbench -postgres URL -mode insert -jobs 50000
//	riverbench -postgres URL -mode latency -rate 200 -for 20s
//
// It is a module of its own, so River never enters leasegen's module
// graph.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// options are the flags.
type options struct {
	postgres      string
	mode          string
	jobs          int
	workers       int
	fetchCooldown time.Duration
	fetchPoll     time.Duration
	rate          int
	measure       time.Duration
	warmup        time.Duration
	database      string // latency-worker: the parent's scratch database
}

func main() {
	var o options
	flag.StringVar(&o.postgres, "postgres", "", "PostgreSQL server URL of a user that may create databases")
	flag.StringVar(&o.mode, "mode", "burn", "burn, insert or latency")
	flag.IntVar(&o.jobs, "jobs", 50000, "jobs in a burn-down or an insert run")
	flag.IntVar(&o.workers, "workers", 100, "MaxWorkers of the default queue")
	flag.DurationVar(&o.fetchCooldown, "fetch-cooldown", river.FetchCooldownDefault, "Config.FetchCooldown")
	flag.DurationVar(&o.fetchPoll, "fetch-poll", river.FetchPollIntervalDefault, "Config.FetchPollInterval")
	flag.IntVar(&o.rate, "rate", 200, "inserts per second in the latency run")
	flag.DurationVar(&o.measure, "for", 20*time.Second, "measured length of the latency run")
	flag.DurationVar(&o.warmup, "warmup", 2*time.Second, "unmeasured lead-in of the latency run")
	flag.StringVar(&o.database, "database", "", "latency-worker: the database URL to work on")
	flag.Parse()
	if err := run(context.Background(), o); err != nil {
		fmt.Fprintln(os.Stderr, "riverbench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	if o.mode == "latency-worker" {
		return latencyWorker(ctx, o)
	}
	if o.postgres == "" {
		return errors.New("give -postgres URL")
	}
	dbURL, drop, err := scratch(ctx, o.postgres)
	if err != nil {
		return err
	}
	defer drop()
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return err
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("migrate River's schema: %w", err)
	}
	switch o.mode {
	case "burn":
		return burn(ctx, o, pool)
	case "insert":
		return insert(ctx, o, pool)
	case "latency":
		return latency(ctx, o, pool, dbURL)
	}
	return fmt.Errorf("unknown -mode %q", o.mode)
}

// scratch creates an empty database on the server and returns its URL and
// a function that drops it.
func scratch(ctx context.Context, serverURL string) (string, func(), error) {
	admin, err := pgxpool.New(ctx, serverURL)
	if err != nil {
		return "", nil, err
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := "river_bench_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		admin.Close()
		return "", nil, fmt.Errorf("create scratch database: %w", err)
	}
	u, err := url.Parse(serverURL)
	if err != nil {
		admin.Close()
		return "", nil, err
	}
	u.Path = "/" + name
	return u.String(), func() {
		_, _ = admin.Exec(context.Background(), "DROP DATABASE "+name+" WITH (FORCE)")
		admin.Close()
	}, nil
}

// NoopArgs is the benchmark's job: it does nothing.
type NoopArgs struct{}

// Kind names the job kind.
func (NoopArgs) Kind() string { return "noop" }

type noopWorker struct{ river.WorkerDefaults[NoopArgs] }

func (noopWorker) Work(context.Context, *river.Job[NoopArgs]) error { return nil }

// newClient returns a client of pool; with workers it works the default
// queue with that many, tuned by o's fetch settings.
func newClient(pool *pgxpool.Pool, o options, workers *river.Workers) (*river.Client[pgxTx], error) {
	cfg := &river.Config{Logger: slog.New(slog.DiscardHandler)}
	if workers != nil {
		cfg.Workers = workers
		cfg.Queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: o.workers}}
		cfg.FetchCooldown = o.fetchCooldown
		cfg.FetchPollInterval = o.fetchPoll
	}
	return river.NewClient(riverpgxv5.New(pool), cfg)
}

// insertJobs inserts n no-op jobs in batches of 1,000 with COPY.
func insertJobs(ctx context.Context, client *river.Client[pgxTx], n int) error {
	batch := make([]river.InsertManyParams, 1000)
	for i := range batch {
		batch[i] = river.InsertManyParams{Args: NoopArgs{}}
	}
	for left := n; left > 0; left -= len(batch) {
		if _, err := client.InsertManyFast(ctx, batch[:min(left, len(batch))]); err != nil {
			return err
		}
	}
	return nil
}

// burn queues o.jobs no-op jobs, works them with one client, and prints
// the jobs per second from the first attempt to the last completion, on
// the database's clock.
func burn(ctx context.Context, o options, pool *pgxpool.Pool) error {
	workers := river.NewWorkers()
	river.AddWorker(workers, noopWorker{})
	client, err := newClient(pool, o, workers)
	if err != nil {
		return err
	}
	if err := insertJobs(ctx, client, o.jobs); err != nil {
		return err
	}
	if err := client.Start(ctx); err != nil {
		return err
	}
	deadline := time.Now().Add(10 * time.Minute)
	for {
		var left int
		if err := pool.QueryRow(ctx, "SELECT COUNT(*) FROM river_job WHERE state <> 'completed'").Scan(&left); err != nil {
			return err
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d jobs left after 10 minutes", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := client.Stop(stop); err != nil {
		return err
	}
	var done int
	var span float64
	err = pool.QueryRow(ctx, `SELECT COUNT(*), EXTRACT(EPOCH FROM MAX(finalized_at) - MIN(attempted_at))::float8
		FROM river_job WHERE state = 'completed'`).Scan(&done, &span)
	if err != nil {
		return err
	}
	if done != o.jobs {
		return fmt.Errorf("%d of %d jobs completed", done, o.jobs)
	}
	fmt.Printf("burn\t%.0f\n", float64(done)/span)
	return nil
}

// insert prints the rates of InsertMany and InsertManyFast (COPY) in
// batches of 1,000 jobs.
func insert(ctx context.Context, o options, pool *pgxpool.Pool) error {
	client, err := newClient(pool, o, nil)
	if err != nil {
		return err
	}
	batch := make([]river.InsertManyParams, 1000)
	for i := range batch {
		batch[i] = river.InsertManyParams{Args: NoopArgs{}}
	}
	for _, m := range []struct {
		name   string
		insert func() error
	}{
		{"insert-many", func() error { _, err := client.InsertMany(ctx, batch); return err }},
		{"insert-many-fast", func() error { _, err := client.InsertManyFast(ctx, batch); return err }},
	} {
		start := time.Now()
		for range o.jobs / len(batch) {
			if err := m.insert(); err != nil {
				return fmt.Errorf("%s: %w", m.name, err)
			}
		}
		fmt.Printf("%s\t%.0f\n", m.name, float64(o.jobs/len(batch)*len(batch))/time.Since(start).Seconds())
	}
	return nil
}
