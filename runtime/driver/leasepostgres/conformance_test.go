package leasepostgres

import (
	"context"
	"database/sql"
	"net/url"
	"testing"

	"go.uber.org/goleak"

	"github.com/leasegen/leasegen/internal/dbtest/pgtest"
	"github.com/leasegen/leasegen/internal/placeholder"
	"github.com/leasegen/leasegen/runtime/driver/drivertest"
	"github.com/leasegen/leasegen/runtime/internal/systemtest"
)

// harness runs the conformance suite on databases of the server at
// LEASEGEN_POSTGRES_DSN.
var harness = drivertest.Harness{
	Name:        "postgres",
	NewDatabase: func(t testing.TB) string { return pgtest.New(t) },
	Open:        openPool,
	New:         New,
	ExpireSQL:   "UPDATE leasegen_tasks SET lease_until = now() - interval '1 second' WHERE id = $1",
	LockWaits: func(db *sql.DB) (int, error) {
		var waits int
		err := db.QueryRow("SELECT COUNT(*) FROM pg_locks WHERE NOT granted").Scan(&waits)
		return waits, err
	},
	MillisUntilSQL: "SELECT CAST(EXTRACT(EPOCH FROM (%s - now())) * 1000 AS BIGINT) FROM leasegen_tasks WHERE id = $1",
	LeaseColumn:    "lease_until",
	Placeholder:    placeholder.Dollar,
	ServerAddr:     serverAddr,
	WithServerAddr: withServerAddr,
	PrivateServer:  func(t testing.TB) drivertest.Server { return pgtest.StartServer(t) },
}

func openPool(dsn string) (*sql.DB, error) {
	db, err := Open(dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(32)
	db.SetMaxIdleConns(32)
	return db, nil
}

func serverAddr(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		panic(err)
	}
	return u.Host
}

// withServerAddr is dsn through addr. The proxy that cuts connections
// finds a statement by its text: in plain TCP, and sent every time (pgx
// otherwise sends it only when it prepares the statement).
func withServerAddr(dsn, addr string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		panic(err)
	}
	u.Host = addr
	q := u.Query()
	q.Set("default_query_exec_mode", "exec")
	q.Set("sslmode", "disable")
	u.RawQuery = q.Encode()
	return u.String()
}

// TestMain fails on any goroutine still running after the tests: every
// worker loop must be joined by Stop.
var bg = context.Background()

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformance(t *testing.T) { drivertest.Exercise(t, &harness) }
func TestSystem(t *testing.T)      { systemtest.Run(t, &harness) }

// BenchmarkDriver times the hot paths: `make bench` runs it; `make
// bench-smoke` (in CI) runs each once.
func BenchmarkDriver(b *testing.B) { drivertest.Benchmark(b, &harness) }
