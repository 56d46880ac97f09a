package runtime

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"

	"github.com/leasegen/leasegen/runtime/migrations"
)

// Engine is a database that holds leasegen's tables. Clients and workers
// built on one Engine share it; a worker wakes at once when a client of the
// same Engine enqueues a task it handles.
type Engine struct {
	db    *sql.DB
	store driver.Driver
	// migrations holds this engine's NNNN_name.sql files under dir.
	migrations fs.FS
	dir        string
	// conflictRetries counts operations run again after a deadlock, a
	// lock-wait timeout or a busy database.
	conflictRetries atomic.Int64
	observer        Observer

	mu      sync.Mutex
	waiters map[chan struct{}][]string // a worker's wake channel -> its types
}

// MySQL returns the engine for MySQL 8 or MariaDB 10.6+. The DSN must carry
// parseTime=true, keep loc=UTC (the driver's default) and run sessions in UTC
// (time_zone=%27%2B00%3A00%27 unless the server's own zone is UTC); the
// first operation checks this and says what to change. Recommended too:
// interpolateParams=true.
func MySQL(db *sql.DB, opts ...EngineOption) *Engine {
	e := newEngine(db, migrations.MySQL, "mysql", opts)
	e.store = newMySQLStore(db, e.conflictRetried)
	return e
}

func newEngine(db *sql.DB, fsys fs.FS, dir string, opts []EngineOption) *Engine {
	e := &Engine{db: db, migrations: fsys, dir: dir, observer: nopObserver{}}
	for _, opt := range opts {
		opt(e)
	}
	return e
}

// conflictRetried counts a retried operation.
func (e *Engine) conflictRetried() {
	e.conflictRetries.Add(1)
	e.observer.ConflictRetried()
}

// SQLite returns the engine for a SQLite database opened with the pure-Go
// driver modernc.org/sqlite, for example
//
//	db, err := sql.Open("sqlite", runtime.SQLiteDSN("tasks.db"))
//
// Several processes on one machine may share the file.
func SQLite(db *sql.DB, opts ...EngineOption) *Engine {
	e := newEngine(db, migrations.SQLite, "sqlite", opts)
	e.store = newSQLiteStore(db, e.conflictRetried)
	return e
}

// DB returns the engine's database handle.
func (e *Engine) DB() *sql.DB { return e.db }

// Migrate creates or updates leasegen's tables. It is idempotent and safe to
// call from many processes at once.
func (e *Engine) Migrate(ctx context.Context) error {
	if err := e.store.Check(ctx); err != nil {
		return e.classify(err)
	}
	return e.classify(e.store.Migrate(ctx))
}

// MigrationState is one schema version and whether it is applied.
type MigrationState struct {
	Version   int
	Name      string
	AppliedAt time.Time // zero while pending
}

// MigrationStatus lists every schema version of the engine, applied or not.
func (e *Engine) MigrationStatus(ctx context.Context) ([]MigrationState, error) {
	steps, err := loadMigrations(e.migrations, e.dir)
	if err != nil {
		return nil, err
	}
	applied, err := e.store.MigrationStatus(ctx)
	if err != nil && e.store.ErrorKind(err) != driver.KindNoTable {
		return nil, e.classify(err)
	}
	states := make([]MigrationState, len(steps))
	for i, m := range steps {
		states[i] = MigrationState{Version: m.Version, Name: m.Name, AppliedAt: applied[m.Version]}
	}
	return states, nil
}

// requireSchema returns ErrNoSchema, naming the versions missing, unless
// every migration this runtime knows is applied.
func (e *Engine) requireSchema(ctx context.Context) error {
	states, err := e.MigrationStatus(ctx)
	if err != nil {
		return err
	}
	var pending []string
	for _, st := range states {
		if st.AppliedAt.IsZero() {
			pending = append(pending, strconv.Itoa(st.Version))
		}
	}
	switch {
	case len(pending) == len(states):
		return fmt.Errorf("%w: no migration is applied", ErrNoSchema)
	case len(pending) > 0:
		return fmt.Errorf("%w: schema version %s is not applied", ErrNoSchema, strings.Join(pending, ", "))
	}
	return nil
}

// MigrationSQL returns the engine's migrations as one SQL script, in order.
func (e *Engine) MigrationSQL() (string, error) {
	names, err := fs.Glob(e.migrations, e.dir+"/*.sql")
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, name := range names {
		body, err := fs.ReadFile(e.migrations, name)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "-- %s\n%s\n", name, strings.TrimSpace(string(body)))
	}
	return b.String(), nil
}

// subscribe registers a worker's wake channel for its task types.
func (e *Engine) subscribe(ch chan struct{}, types []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.waiters == nil {
		e.waiters = map[chan struct{}][]string{}
	}
	e.waiters[ch] = types
}

func (e *Engine) unsubscribe(ch chan struct{}) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.waiters, ch)
}

// notify wakes the local workers that handle taskType, without blocking.
func (e *Engine) notify(taskType string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for ch, types := range e.waiters {
		if !slices.Contains(types, taskType) {
			continue
		}
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}
