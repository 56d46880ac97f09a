package runtime_test

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/leasegen/leasegen/runtime/driver/drivertest"
	"github.com/leasegen/leasegen/runtime/driver/leasesqlite"
	"github.com/leasegen/leasegen/runtime/internal/systemtest"
)

// sqlite is the engine the runtime's engine-independent cases run on
// once: a SQLite file in each test's temporary folder.
var sqlite = drivertest.Harness{
	Name:        "sqlite",
	NewDatabase: func(t testing.TB) string { return leasesqlite.DSN(filepath.Join(t.TempDir(), "tasks.db")) },
	Open:        func(dsn string) (*sql.DB, error) { return sql.Open("sqlite", dsn) },
	New:         leasesqlite.New,
}

// TestEngineIndependent runs the system suite's cases that the runtime
// decides alone (input validation, failure logs, panics, Stop's bound,
// Client.Wait, WorkOne); the drivers' TestSystem runs the rest on each
// engine.
func TestEngineIndependent(t *testing.T) { systemtest.RunEngineIndependent(t, &sqlite) }
