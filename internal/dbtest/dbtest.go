// Package dbtest gives each test its own MySQL database, created for the
// test and dropped after it, so tests can run in parallel on one server.
//
// Tests find the server through LEASEGEN_MYSQL_DSN, a DSN without a
// database name whose user may create and drop databases named
// leasegen_test_*. `make test` sets it up (see scripts/mysql-env.sh).
// Without it a test skips, saying how to enable it; with CI=true it fails.
package dbtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// EnvDSN names the variable that enables the MySQL tests.
const EnvDSN = "LEASEGEN_MYSQL_DSN"

// DSNParams are the driver parameters leasegen recommends.
const DSNParams = "parseTime=true&loc=UTC&time_zone=%27%2B00%3A00%27&interpolateParams=true&timeout=5s&readTimeout=30s&writeTimeout=30s"

// ServerDSN returns the configured DSN, skipping t (failing it under CI)
// when none is set.
func ServerDSN(t testing.TB) string {
	t.Helper()
	return Setting(t, EnvDSN, "MySQL", "run `make test` with MariaDB up on 127.0.0.1:3306 (LEASEGEN_START_MYSQL=1 make test starts an installed one), or set "+EnvDSN+" to a server DSN such as root@tcp(127.0.0.1:3306)/")
}

// Setting returns the environment variable env, which enables the what
// tests. When it is not set, it fails t under CI=true (CI must run every
// test) and skips t elsewhere, saying how to enable them.
func Setting(t testing.TB, env, what, enable string) string {
	t.Helper()
	v := os.Getenv(env)
	if v == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set and CI=true: the %s tests must run in CI", env, what)
		}
		t.Skipf("%s test skipped: %s", what, enable)
	}
	return v
}

// EnvGaleraDSNs names the variable that lists the nodes of a MariaDB
// Galera cluster, comma-separated server DSNs, for the tests that spread
// workers over its nodes. scripts/galera.sh starts one and prints it.
const EnvGaleraDSNs = "LEASEGEN_GALERA_DSNS"

// EnvGroupReplicationDSNs names the variable that lists the members of a
// MySQL Group Replication group. scripts/group-replication.sh starts one
// and prints it.
const EnvGroupReplicationDSNs = "LEASEGEN_GR_DSNS"

// GaleraNodes returns the server DSNs of EnvGaleraDSNs, skipping t
// (failing it under CI) when it is not set.
func GaleraNodes(t testing.TB) []string {
	t.Helper()
	return nodes(t, EnvGaleraDSNs, "Galera", "scripts/galera.sh starts a three-node cluster")
}

// GroupReplicationNodes returns the server DSNs of
// EnvGroupReplicationDSNs, skipping t (failing it under CI) when it is not
// set.
func GroupReplicationNodes(t testing.TB) []string {
	t.Helper()
	return nodes(t, EnvGroupReplicationDSNs, "Group Replication", "scripts/group-replication.sh starts a group of three")
}

func nodes(t testing.TB, env, what, how string) []string {
	t.Helper()
	return strings.Split(Setting(t, env, what, "run `make test` as root ("+how+"), or set "+env+" to the nodes' DSNs, comma-separated"), ",")
}

// Database is one test's database.
type Database struct {
	Name string
	DSN  string // DSN of this database, with DSNParams
	DB   *sql.DB
}

// New creates a fresh database for t on the server of EnvDSN and drops
// it when t ends.
func New(t testing.TB) *Database {
	t.Helper()
	return NewOn(t, ServerDSN(t))
}

// NewOn creates a fresh database for t on the server of serverDSN and
// drops it when t ends.
func NewOn(t testing.TB, serverDSN string) *Database {
	t.Helper()
	cfg, err := mysql.ParseDSN(serverDSN)
	if err != nil {
		t.Fatalf("server DSN %q: %v", serverDSN, err)
	}
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	name := "leasegen_test_" + randomSuffix()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create test database (is the server at %s up and may this user create databases?): %v", cfg.Addr, err)
	}
	dsn := WithDatabase(t, cfg.FormatDSN(), name)
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(32)
	db.SetMaxIdleConns(32)
	t.Cleanup(func() {
		db.Close()
		admin, err := sql.Open("mysql", cfg.FormatDSN())
		if err != nil {
			t.Error(err)
			return
		}
		defer admin.Close()
		// A transaction a failed test left open holds a metadata lock that
		// the DROP would wait for until the test binary times out.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := admin.Conn(ctx)
		if err == nil {
			defer conn.Close()
			_, err = conn.ExecContext(ctx, "SET SESSION lock_wait_timeout = 10")
		}
		if err == nil {
			_, err = conn.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name)
		}
		if err != nil {
			t.Errorf("drop test database %s (a transaction left open?): %v; its sessions:%s", name, err, sessionsOf(admin, name))
		}
	})
	return &Database{Name: name, DSN: dsn, DB: db}
}

// WithDatabase returns serverDSN pointed at database name, with DSNParams.
func WithDatabase(t testing.TB, serverDSN, name string) string {
	t.Helper()
	cfg, err := mysql.ParseDSN(serverDSN)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DBName = name
	base := cfg.FormatDSN()
	if strings.Contains(base, "?") {
		return base + "&" + DSNParams
	}
	return base + "?" + DSNParams
}

func randomSuffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Open opens another pool on d's database, for a second worker or process.
func (d *Database) Open(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", d.DSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Must fails t on err, naming what was being done.
func Must(t testing.TB, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// Int runs a query returning one integer.
func (d *Database) Int(t testing.TB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := d.DB.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// sessionsOf lists the server's sessions on database name, with their
// state and statement, for an error that a session held it.
func sessionsOf(admin *sql.DB, name string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rows, err := admin.QueryContext(ctx, `SELECT id, user, host, command, time, COALESCE(state, ''), COALESCE(LEFT(info, 200), '')
		FROM information_schema.processlist WHERE db = ?`, name)
	if err != nil {
		return " (" + err.Error() + ")"
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var id, secs int64
		var user, host, command, state, info string
		if err := rows.Scan(&id, &user, &host, &command, &secs, &state, &info); err != nil {
			return b.String() + " (" + err.Error() + ")"
		}
		fmt.Fprintf(&b, "\n  session %d %s@%s %s %ds %q: %s", id, user, host, command, secs, state, info)
	}
	if b.Len() == 0 {
		return " none"
	}
	return b.String()
}
