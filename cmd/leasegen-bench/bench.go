package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "modernc.org/sqlite"

	"github.com/leasegen/leasegen/runtime"
)

type options struct {
	mysql       string
	sqlite      bool
	runs        int
	burn        int
	concurrency int
	rate        int
	latencyFor  time.Duration
}

// scratch is one fresh database for one run.
type scratch struct {
	engine *runtime.Engine
	client *runtime.Client
	close  func()
	// reopen opens a second pool and engine on the same database.
	reopen func(ctx context.Context) (*scratch, error)
}

// newScratch creates an empty, migrated database.
func newScratch(ctx context.Context, o options) (*scratch, error) {
	var db *sql.DB
	var engine *runtime.Engine
	var cleanup func()
	var open func() (*sql.DB, *runtime.Engine, error)
	if o.sqlite {
		dir, err := os.MkdirTemp("", "leasegen-bench-")
		if err != nil {
			return nil, err
		}
		db, err = sql.Open("sqlite", runtime.SQLiteDSN(filepath.Join(dir, "bench.db")))
		if err != nil {
			return nil, err
		}
		engine = runtime.SQLite(db)
		cleanup = func() { db.Close(); os.RemoveAll(dir) }
		open = func() (*sql.DB, *runtime.Engine, error) {
			db, err := sql.Open("sqlite", runtime.SQLiteDSN(filepath.Join(dir, "bench.db")))
			return db, runtime.SQLite(db), err
		}
	} else {
		cfg, err := mysql.ParseDSN(o.mysql)
		if err != nil {
			return nil, err
		}
		admin, err := sql.Open("mysql", cfg.FormatDSN())
		if err != nil {
			return nil, err
		}
		var b [4]byte
		_, _ = rand.Read(b[:])
		name := "leasegen_bench_" + hex.EncodeToString(b[:])
		if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
			admin.Close()
			return nil, err
		}
		cfg.DBName, cfg.ParseTime, cfg.InterpolateParams = name, true, true
		cfg.Params = map[string]string{"time_zone": "'+00:00'"}
		db, err = sql.Open("mysql", cfg.FormatDSN())
		if err != nil {
			return nil, err
		}
		db.SetMaxOpenConns(64)
		db.SetMaxIdleConns(64)
		engine = runtime.MySQL(db)
		dsn := cfg.FormatDSN()
		open = func() (*sql.DB, *runtime.Engine, error) {
			db, err := sql.Open("mysql", dsn)
			return db, runtime.MySQL(db), err
		}
		cleanup = func() {
			db.Close()
			_, _ = admin.Exec("DROP DATABASE " + name)
			admin.Close()
		}
	}
	if err := engine.Migrate(ctx); err != nil {
		cleanup()
		return nil, err
	}
	client, err := runtime.NewClient(engine, runtime.ClientConfig{})
	if err != nil {
		cleanup()
		return nil, err
	}
	s := &scratch{engine: engine, client: client, close: cleanup}
	s.reopen = func(ctx context.Context) (*scratch, error) {
		db, engine, err := open()
		if err != nil {
			return nil, err
		}
		client, err := runtime.NewClient(engine, runtime.ClientConfig{})
		if err != nil {
			db.Close()
			return nil, err
		}
		return &scratch{engine: engine, client: client, close: func() { db.Close() }}, nil
	}
	return s, nil
}

// scenario measures one figure in tasks per second.
type scenario struct {
	name string
	run  func(ctx context.Context, s *scratch) (float64, error)
}

func run(o options) error {
	ctx := context.Background()
	if err := describeServer(ctx, o); err != nil {
		return err
	}
	scenarios := []scenario{
		{"enqueue, one at a time (2,000)", func(ctx context.Context, s *scratch) (float64, error) {
			return rate(2000, func() error {
				for range 2000 {
					if _, err := s.client.Enqueue(ctx, "noop", nil); err != nil {
						return err
					}
				}
				return nil
			})
		}},
		{"enqueue, batches of 1,000 (50,000)", func(ctx context.Context, s *scratch) (float64, error) {
			reqs := make([]runtime.Request, 1000)
			for i := range reqs {
				reqs[i] = runtime.Request{Type: "noop"}
			}
			return rate(50000, func() error {
				for range 50 {
					if _, err := s.client.EnqueueMany(ctx, reqs); err != nil {
						return err
					}
				}
				return nil
			})
		}},
		{fmt.Sprintf("burn-down, 1 worker, %d slots (%d no-op tasks)", o.concurrency, o.burn), func(ctx context.Context, s *scratch) (float64, error) {
			return burnDown(ctx, s, o)
		}},
		{"ceiling: row updates, batches of 256 (rows/s)", func(ctx context.Context, s *scratch) (float64, error) {
			return ceiling(ctx, o, s)
		}},
		{"naive baseline: 1 task per claim tx, 16 workers", func(ctx context.Context, s *scratch) (float64, error) {
			return naive(ctx, o, s)
		}},
	}
	fmt.Printf("%-52s %12s %24s\n", "figure", "tasks/s", "range (median of runs)")
	medians := map[string]float64{}
	for _, sc := range scenarios {
		var results []float64
		for range o.runs {
			s, err := newScratch(ctx, o)
			if err != nil {
				return err
			}
			r, err := sc.run(ctx, s)
			s.close()
			if err != nil {
				return fmt.Errorf("%s: %w", sc.name, err)
			}
			results = append(results, r)
		}
		slices.Sort(results)
		fmt.Printf("%-52s %12.0f %12.0f - %-10.0f\n", sc.name, results[len(results)/2], results[0], results[len(results)-1])
		medians[sc.name] = results[len(results)/2]
	}
	burn := medians[scenarios[2].name]
	// A task updates its row twice: the claim and the completion.
	fmt.Printf("burn-down: %.0f%% of the row-update ceiling (2 row updates a task), %.1fx the naive baseline\n",
		100*2*burn/medians[scenarios[3].name], burn/medians[scenarios[4].name])
	if o.latencyFor > 0 {
		if err := printLatency(ctx, o); err != nil {
			return err
		}
	}
	return footprint(ctx, o)
}

func rate(n int, f func() error) (float64, error) {
	start := time.Now()
	if err := f(); err != nil {
		return 0, err
	}
	return float64(n) / time.Since(start).Seconds(), nil
}

// burnDown queues o.burn no-op tasks, then times one worker from its start
// to the last completion.
func burnDown(ctx context.Context, s *scratch, o options) (float64, error) {
	reqs := make([]runtime.Request, 1000)
	for i := range reqs {
		reqs[i] = runtime.Request{Type: "noop"}
	}
	for range o.burn / 1000 {
		if _, err := s.client.EnqueueMany(ctx, reqs); err != nil {
			return 0, err
		}
	}
	w, err := runtime.NewWorker(s.engine, runtime.Config{
		LeaseTimeout: 30 * time.Second, HeartbeatInterval: 5 * time.Second, PollInterval: 50 * time.Millisecond,
		MaxConcurrency: o.concurrency, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return 0, err
	}
	if err := w.Handle("noop", func(context.Context, *runtime.Task) error { return nil }); err != nil {
		return 0, err
	}
	total := int64(o.burn / 1000 * 1000)
	start := time.Now()
	if err := w.Start(ctx); err != nil {
		return 0, err
	}
	defer w.Stop(ctx) //nolint:errcheck // the run is over
	deadline := start.Add(10 * time.Minute)
	for w.Stats().Completed < total {
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("burn-down: %d of %d done after 10 minutes", w.Stats().Completed, total)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return float64(total) / time.Since(start).Seconds(), nil
}

// describeServer prints the server's version and durability settings.
func describeServer(ctx context.Context, o options) error {
	s, err := newScratch(ctx, o)
	if err != nil {
		return err
	}
	defer s.close()
	db := s.engine.DB()
	if o.sqlite {
		var version, journal string
		var sync int
		if err := db.QueryRowContext(ctx, "SELECT sqlite_version(), (SELECT journal_mode FROM pragma_journal_mode), (SELECT synchronous FROM pragma_synchronous)").Scan(&version, &journal, &sync); err != nil {
			return err
		}
		fmt.Printf("server: SQLite %s, journal_mode=%s, synchronous=%d (2 = FULL)\n", version, journal, sync)
		return nil
	}
	var version, flush, syncBinlog string
	if err := db.QueryRowContext(ctx, "SELECT VERSION(), @@innodb_flush_log_at_trx_commit, @@sync_binlog").Scan(&version, &flush, &syncBinlog); err != nil {
		return err
	}
	fmt.Printf("server: %s, innodb_flush_log_at_trx_commit=%s, sync_binlog=%s\n", version, flush, syncBinlog)
	return nil
}
