package runtime

import (
	"context"
	"database/sql"
	"slices"
	"sync"
	"sync/atomic"
)

// Engine is a database that holds leasegen's tables. Clients and workers
// built on one Engine share it; a worker wakes at once when a client of the
// same Engine enqueues a task it handles.
type Engine struct {
	db    *sql.DB
	store store
	// conflictRetries counts operations run again after a deadlock, a
	// lock-wait timeout or a busy database.
	conflictRetries atomic.Int64

	mu      sync.Mutex
	waiters map[chan struct{}][]string // a worker's wake channel -> its types
}

// MySQL returns the engine for MySQL 8 or MariaDB 10.6+. The DSN must carry
// parseTime=true, keep loc=UTC (the driver's default) and run sessions in UTC
// (time_zone=%27%2B00%3A00%27 unless the server's own zone is UTC); the
// first operation checks this and says what to change. Recommended too:
// interpolateParams=true.
func MySQL(db *sql.DB) *Engine {
	e := &Engine{db: db}
	e.store = newMySQLStore(db, &e.conflictRetries)
	return e
}

// SQLite returns the engine for a SQLite database opened with the pure-Go
// driver modernc.org/sqlite, for example
//
//	db, err := sql.Open("sqlite", runtime.SQLiteDSN("tasks.db"))
//
// Several processes on one machine may share the file.
func SQLite(db *sql.DB) *Engine {
	e := &Engine{db: db}
	e.store = newSQLiteStore(db, &e.conflictRetries)
	return e
}

// DB returns the engine's database handle.
func (e *Engine) DB() *sql.DB { return e.db }

// Migrate creates or updates leasegen's tables. It is idempotent and safe to
// call from many processes at once.
func (e *Engine) Migrate(ctx context.Context) error {
	if err := e.store.check(ctx); err != nil {
		return classify(err)
	}
	return classify(e.store.migrate(ctx))
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
