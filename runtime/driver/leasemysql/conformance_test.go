package leasemysql

import (
	"context"
	"database/sql"
	"testing"

	"github.com/go-sql-driver/mysql"
	"go.uber.org/goleak"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver/drivertest"
	"github.com/leasegen/leasegen/runtime/internal/systemtest"
)

var bg = context.Background()

// harness runs the conformance suite on the MySQL server of
// LEASEGEN_MYSQL_DSN (MariaDB or Oracle MySQL), a fresh database a test.
var harness = drivertest.Harness{
	Name:        "mysql",
	NewDatabase: func(t testing.TB) string { return dbtest.New(t).DSN },
	Open:        func(dsn string) (*sql.DB, error) { return sql.Open("mysql", dsn) },
	New:         New,
	ExpireSQL:   "UPDATE leasegen_tasks SET due_at = NOW(3) - INTERVAL 1 SECOND WHERE id = ?",
	LockWaits: func(db *sql.DB) (int, error) {
		// The status needs no PROCESS privilege, as innodb_trx does.
		var name string
		var waits int
		err := db.QueryRow("SHOW GLOBAL STATUS LIKE 'Innodb_row_lock_current_waits'").Scan(&name, &waits)
		return waits, err
	},
	MillisUntilSQL: "SELECT TIMESTAMPDIFF(MICROSECOND, NOW(3), %s) DIV 1000 FROM leasegen_tasks WHERE id = ?",
	ServerAddr: func(dsn string) string {
		cfg, err := mysql.ParseDSN(dsn)
		if err != nil {
			panic(err) // the DSNs come from dbtest, which formats them
		}
		return cfg.Addr
	},
	WithServerAddr: func(dsn, addr string) string {
		cfg, err := mysql.ParseDSN(dsn)
		if err != nil {
			panic(err)
		}
		cfg.Addr = addr
		return cfg.FormatDSN()
	},
	PrivateServer: func(t testing.TB) drivertest.Server { return dbtest.StartServer(t) },
}

// TestMain fails on any goroutine still running after the tests: every
// worker loop must be joined by Stop.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformance(t *testing.T) { drivertest.Exercise(t, &harness) }
func TestSystem(t *testing.T)      { systemtest.Run(t, &harness) }

// BenchmarkDriver times the hot paths: `make bench` runs it; `make
// bench-smoke` (in CI) runs each once.
func BenchmarkDriver(b *testing.B) { drivertest.Benchmark(b, &harness) }

// engineOn returns the engine on a pool.
func engineOn(db *sql.DB) *runtime.Engine { return runtime.NewEngine(New(db)) }
