package runtime

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/migrations"
)

// Engine is a database that holds leasegen's tables, reached through an
// engine driver (leasemysql, leasesqlite). Clients and workers built on one
// Engine share it; a worker wakes at once when a client of the same Engine
// enqueues a task it handles.
type Engine struct {
	db     *sql.DB
	driver driver.Driver
	tables driver.Tables // the driver's, on the pool
	// conflictRetries counts operations run again after a deadlock, a
	// lock-wait timeout or a busy database.
	conflictRetries atomic.Int64
	observer        Observer
	// parents are the task types whose tasks may have waiting workflow
	// children: a worker settles the children of those tasks only.
	parents parentTypes
}

// NewEngine returns the engine on d, a driver from leasemysql.New or
// leasesqlite.New:
//
//	engine := runtime.NewEngine(leasesqlite.New(db))
//
// A driver serves one engine.
func NewEngine(d driver.Driver, opts ...EngineOption) *Engine {
	e := &Engine{db: d.DB(), driver: d, tables: d.Tables(), observer: BaseObserver{}}
	for _, opt := range opts {
		opt(e)
	}
	d.Attach(driver.Hooks{ConflictRetried: e.conflictRetried})
	return e
}

// conflictRetried counts a retried operation.
func (e *Engine) conflictRetried() {
	e.conflictRetries.Add(1)
	e.observer.ConflictRetried()
}

// DB returns the engine's database handle.
func (e *Engine) DB() *sql.DB { return e.db }

// Migrate creates or updates leasegen's tables. It is idempotent and safe to
// call from many processes at once.
func (e *Engine) Migrate(ctx context.Context) error {
	if err := e.driver.Check(ctx); err != nil {
		return e.classify(err)
	}
	return e.classify(e.driver.Migrate(ctx))
}

// MigrationState is one schema version and whether it is applied.
type MigrationState struct {
	Version   int
	Name      string
	AppliedAt time.Time // zero while pending
}

// MigrationStatus lists every schema version of the engine, applied or not.
func (e *Engine) MigrationStatus(ctx context.Context) ([]MigrationState, error) {
	steps, err := migrations.Load(e.driver.Migrations())
	if err != nil {
		return nil, err
	}
	applied, err := e.tables.MigrationList(ctx)
	if err != nil && e.driver.ErrorKind(err) != driver.KindNoTable {
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
	files := e.driver.Migrations()
	names, err := fs.Glob(files, "*.sql")
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, name := range names {
		body, err := fs.ReadFile(files, name)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "-- %s\n%s\n", name, strings.TrimSpace(string(body)))
	}
	return b.String(), nil
}
