// Package engines opens an engine from the flags leasegen's own commands
// take (leasectl, the demo, the benchmark): a MySQL DSN, given the settings
// the runtime needs, a PostgreSQL URL, or a SQLite file.
package engines

import (
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver/leasemysql"
	"github.com/leasegen/leasegen/runtime/driver/leasepostgres"
	"github.com/leasegen/leasegen/runtime/driver/leasesqlite"
)

// ErrBadDSN reports a MySQL DSN that does not parse.
var ErrBadDSN = leasemysql.ErrBadDSN

// ErrNoFile reports a SQLite file that does not exist when it may not be
// created.
var ErrNoFile = errors.New("no such file")

// MySQL opens a pool on dsn with leasemysql.Open, which adds what the
// runtime needs (parseTime, UTC), and the engine on it.
func MySQL(dsn string) (*sql.DB, *runtime.Engine, error) {
	db, err := leasemysql.Open(dsn)
	if err != nil {
		return nil, nil, err
	}
	return db, runtime.NewEngine(leasemysql.New(db)), nil
}

// Postgres opens a pool on a PostgreSQL URL or key=value DSN with
// leasepostgres.Open, and the engine on it.
func Postgres(dsn string) (*sql.DB, *runtime.Engine, error) {
	db, err := leasepostgres.Open(dsn)
	if err != nil {
		return nil, nil, err
	}
	return db, runtime.NewEngine(leasepostgres.New(db)), nil
}

// SQLite opens the SQLite file at path with leasesqlite.Open, and the
// engine on it. Unless create is set, a path that does not exist is
// ErrNoFile: a mistyped path would otherwise open a new, empty database.
func SQLite(path string, create bool) (*sql.DB, *runtime.Engine, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) && !create {
		return nil, nil, fmt.Errorf("%s: %w", path, ErrNoFile)
	}
	db, err := leasesqlite.Open(path)
	if err != nil {
		return nil, nil, err
	}
	return db, runtime.NewEngine(leasesqlite.New(db)), nil
}

// IsPostgres reports whether dsn is a PostgreSQL URL, which the demo's
// -dsn tells from a MySQL DSN by its scheme.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}
