package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-sql-driver/mysql"
	_ "modernc.org/sqlite"

	"github.com/leasegen/leasegen/internal/engines"
	"github.com/leasegen/leasegen/runtime"
)

// Engine kinds.
const (
	kindMySQL    = "mysql"
	kindPostgres = "postgres"
	kindSQLite   = "sqlite"
)

// scratch is one fresh, migrated database for one run.
type scratch struct {
	kind   string
	target string // what openEngine needs: a MySQL DSN or a SQLite file
	db     *sql.DB
	engine *runtime.Engine
	client *runtime.Client
	close  func()
}

// newScratch creates an empty database and migrates it: a MySQL or
// PostgreSQL database named -db-prefix<random>, dropped by close, or a
// SQLite file in a temporary folder.
func newScratch(ctx context.Context, o options) (*scratch, error) {
	s := &scratch{kind: o.kind()}
	var drop func()
	switch {
	case o.sqlite:
		dir, err := os.MkdirTemp("", "leasegen-bench-")
		if err != nil {
			return nil, err
		}
		s.target = filepath.Join(dir, "bench.db")
		drop = func() { os.RemoveAll(dir) }
	case o.postgres != "":
		dsn, dropDB, err := createPostgresDatabase(ctx, o.postgres, o.dbPrefix)
		if err != nil {
			return nil, err
		}
		s.target, drop = dsn, dropDB
	default:
		dsn, dropDB, err := createMySQLDatabase(ctx, o.mysql, o.dbPrefix)
		if err != nil {
			return nil, err
		}
		s.target, drop = dsn, dropDB
	}
	db, engine, err := openEngine(s.kind, s.target)
	if err != nil {
		drop()
		return nil, err
	}
	s.db, s.engine = db, engine
	s.close = func() { db.Close(); drop() }
	if err := engine.Migrate(ctx); err != nil {
		s.close()
		return nil, err
	}
	if s.client, err = runtime.NewClient(engine, runtime.ClientConfig{}); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// createMySQLDatabase creates a scratch database on the server of dsn and
// returns the DSN of a session in it as the runtime wants one, and a
// function that drops it.
func createMySQLDatabase(ctx context.Context, serverDSN, prefix string) (string, func(), error) {
	cfg, err := mysql.ParseDSN(serverDSN)
	if err != nil {
		return "", nil, fmt.Errorf("-mysql: %w", err)
	}
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return "", nil, err
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := prefix + hex.EncodeToString(b[:])
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		admin.Close()
		return "", nil, fmt.Errorf("create scratch database: %w", err)
	}
	cfg.DBName, cfg.ParseTime, cfg.InterpolateParams, cfg.ClientFoundRows = name, true, true, true
	cfg.Params = map[string]string{"time_zone": "'+00:00'"}
	drop := func() {
		_, _ = admin.Exec("DROP DATABASE " + name)
		admin.Close()
	}
	return cfg.FormatDSN(), drop, nil
}

// openEngine opens a pool and an engine on target, in this process or in
// a worker process.
func openEngine(kind, target string) (*sql.DB, *runtime.Engine, error) {
	switch kind {
	case kindSQLite:
		return engines.SQLite(target, true)
	case kindPostgres:
		return engines.Postgres(target)
	}
	return engines.MySQL(target)
}

// queue enqueues n tasks of taskType in batches of 1,000.
func queue(ctx context.Context, s *scratch, taskType string, n int) error {
	return queueKeyed(ctx, s, taskType, n, nil)
}

// queueKeyed enqueues n tasks of taskType in batches of 1,000, task i with
// the options of keyOf(i) (nil: none).
func queueKeyed(ctx context.Context, s *scratch, taskType string, n int, keyOf func(i int) runtime.EnqueueOption) error {
	reqs := make([]runtime.Request, 1000)
	for i := range reqs {
		reqs[i] = runtime.Request{Type: taskType}
	}
	for done := 0; done < n; done += len(reqs) {
		batch := reqs[:min(n-done, len(reqs))]
		if keyOf != nil {
			for i := range batch {
				batch[i].Options = []runtime.EnqueueOption{keyOf(done + i)}
			}
		}
		if _, err := s.client.EnqueueMany(ctx, batch); err != nil {
			return err
		}
	}
	return nil
}
