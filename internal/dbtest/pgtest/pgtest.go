// Package pgtest gives each test its own PostgreSQL database, created for
// the test and dropped after it, so tests can run in parallel on one
// server.
//
// Tests find the server through LEASEGEN_POSTGRES_DSN, a URL of a user
// that may create databases, such as
// postgres://leasegen:leasegen@127.0.0.1:5432/postgres. `make test` sets
// it up (scripts/postgres-env.sh). Without it a test skips, saying how to
// enable it; with CI=true it fails.
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the pgx driver for database/sql

	"github.com/leasegen/leasegen/internal/dbtest"
)

// EnvDSN names the variable that enables the PostgreSQL tests.
const EnvDSN = "LEASEGEN_POSTGRES_DSN"

// ServerDSN returns the configured DSN, skipping t (failing it under CI)
// when none is set.
func ServerDSN(t testing.TB) string {
	t.Helper()
	return dbtest.Setting(t, EnvDSN, "PostgreSQL", "run `make test` with PostgreSQL up on 127.0.0.1:5432, or set "+EnvDSN+" to a URL such as postgres://leasegen:leasegen@127.0.0.1:5432/postgres")
}

// EnvPatroniURL names the variable that holds the URL of a Patroni
// cluster: its nodes, with target_session_attrs=read-write.
// scripts/patroni.sh starts one and prints it.
const EnvPatroniURL = "LEASEGEN_PATRONI_URL"

// PatroniURL returns the URL of EnvPatroniURL, skipping t (failing it
// under CI) when it is not set.
func PatroniURL(t testing.TB) string {
	t.Helper()
	return dbtest.Setting(t, EnvPatroniURL, "Patroni", "run `make test` as root (scripts/patroni.sh starts a leader and a standby), or set "+EnvPatroniURL)
}

// New creates a fresh database for t on the server of EnvDSN, drops it
// when t ends, and returns its URL.
func New(t testing.TB) string {
	t.Helper()
	return NewOn(t, ServerDSN(t))
}

// NewOn creates a fresh database for t on the server of the URL server,
// drops it when t ends, and returns its URL.
func NewOn(t testing.TB, server string) string {
	t.Helper()
	admin, err := sql.Open("pgx", server)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	name := "leasegen_test_" + randomSuffix()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create test database (is the server up, and may this user create databases?): %v", err)
	}
	t.Cleanup(func() {
		admin, err := sql.Open("pgx", server)
		if err != nil {
			t.Error(err)
			return
		}
		defer admin.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		// FORCE ends the sessions a failed test left open.
		if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop test database %s: %v", name, err)
		}
	})
	return WithDatabase(t, server, name)
}

// WithDatabase returns serverDSN, a URL, pointed at database name.
func WithDatabase(t testing.TB, serverDSN, name string) string {
	t.Helper()
	u, err := url.Parse(serverDSN)
	if err != nil {
		t.Fatalf("%s: want a postgres:// URL: %v", EnvDSN, err)
	}
	u.Path = "/" + name
	return u.String()
}

func randomSuffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
