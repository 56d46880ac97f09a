package runtime

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/testwait"
	"github.com/leasegen/leasegen/runtime/driver/leasesqlite"
)

// The tests of this package check the runtime's own logic, on SQLite where
// they need a database; package drivertest runs the lease protocol's suite
// on every engine.

var bg = context.Background()

// newSQLiteEngine returns a migrated engine on a SQLite file of t's.
func newSQLiteEngine(t *testing.T) *Engine {
	t.Helper()
	db, err := leasesqlite.Open(filepath.Join(t.TempDir(), "tasks.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	e := NewEngine(leasesqlite.New(db), WithObserver(&ringer{}))
	if err := e.Migrate(bg); err != nil {
		t.Fatal(err)
	}
	return e
}

// startWorker starts a worker on e with one handler, stopped when t ends.
func startWorker(t *testing.T, e *Engine, cfg Config, taskType string, fn HandlerFunc, opts ...HandlerOption) *Worker {
	t.Helper()
	w, err := NewWorker(e, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Handle(taskType, fn, opts...); err != nil {
		t.Fatal(err)
	}
	if err := w.Start(bg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(bg, 5*time.Second)
		defer cancel()
		_ = w.Stop(ctx)
	})
	return w
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// ringer rings its bell at each execution's start and end and each
// recovery: the tests' waits look again then (bellOf).
type ringer struct {
	BaseObserver
	testwait.Bell
}

func (r *ringer) TaskStarted(string, time.Duration)          { r.Ring() }
func (r *ringer) TaskFinished(string, string, time.Duration) { r.Ring() }
func (r *ringer) LeaseRecovered(string, time.Duration)       { r.Ring() }

// bellOf returns the bell of c's engine's observer (a fresh one, which
// never rings, for an engine without a ringer: waits then look every
// testwait.Recheck).
func bellOf(c *Client) *testwait.Bell {
	if r, ok := c.engine.observer.(*ringer); ok {
		return &r.Bell
	}
	return new(testwait.Bell)
}
