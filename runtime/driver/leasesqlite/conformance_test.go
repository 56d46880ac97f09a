package leasesqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime/driver/drivertest"
	"github.com/leasegen/leasegen/runtime/internal/systemtest"
)

var bg = context.Background()

// harness runs the conformance suite on SQLite files in the tests'
// temporary folders.
var harness = drivertest.Harness{
	Name:           "sqlite",
	NewDatabase:    func(t testing.TB) string { return DSN(filepath.Join(t.TempDir(), "tasks.db")) },
	Open:           func(dsn string) (*sql.DB, error) { return sql.Open("sqlite", dsn) },
	New:            New,
	ExpireSQL:      "UPDATE leasegen_tasks SET due_at = CAST(unixepoch('subsec') * 1000 AS INTEGER) - 1000 WHERE id = ?",
	MillisUntilSQL: "SELECT %s - CAST(unixepoch('subsec') * 1000 AS INTEGER) FROM leasegen_tasks WHERE id = ?",
	Stallable:      stallable,
}

// stallable returns a pool on b's database whose writes hang while
// another connection holds the write lock.
func stallable(t *testing.T, b *drivertest.Bundle) (db *sql.DB, stall, unstall func()) {
	t.Helper()
	var holder *sql.Conn
	stall = func() {
		var err error
		holder, err = b.DB.Conn(bg)
		dbtest.Must(t, "conn", err)
		_, err = holder.ExecContext(bg, "BEGIN IMMEDIATE")
		dbtest.Must(t, "take the write lock", err)
	}
	unstall = func() {
		if holder != nil {
			_, _ = holder.ExecContext(bg, "ROLLBACK")
			holder.Close()
			holder = nil
		}
	}
	t.Cleanup(unstall)
	return b.DB.Open(t), stall, unstall
}

// TestMain fails on any goroutine still running after the tests: every
// worker loop must be joined by Stop.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformance(t *testing.T) { drivertest.Exercise(t, &harness) }
func TestSystem(t *testing.T)      { systemtest.Run(t, &harness) }

// BenchmarkDriver times the hot paths: `make bench` runs it; `make
// bench-smoke` (in CI) runs each once.
func BenchmarkDriver(b *testing.B) { drivertest.Benchmark(b, &harness) }
