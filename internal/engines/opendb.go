// Package engines opens an engine from the flags leasegen's own commands
// take (leasectl, the demo, the benchmark): a MySQL DSN, given the settings
// the runtime needs, or a SQLite file.
package engines

import (
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "modernc.org/sqlite" // the SQLite driver

	"github.com/leasegen/leasegen/runtime"
)

// ErrBadDSN reports a MySQL DSN that does not parse.
var ErrBadDSN = errors.New("the MySQL DSN does not parse (user:pass@tcp(host:3306)/db)")

// ErrNoFile reports a SQLite file that does not exist when it may not be
// created.
var ErrNoFile = errors.New("no such file")

// MySQL opens a pool on dsn with what the runtime needs added (parseTime,
// UTC), so an operator can paste the DSN they have, and 32 idle
// connections, so a worker's loops do not reconnect all the time.
func MySQL(dsn string) (*sql.DB, *runtime.Engine, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrBadDSN, err)
	}
	cfg.ParseTime, cfg.Loc = true, time.UTC
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	cfg.Params["time_zone"] = "'+00:00'"
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrBadDSN, err)
	}
	db := sql.OpenDB(connector)
	db.SetMaxIdleConns(32)
	return db, runtime.MySQL(db), nil
}

// SQLite opens the SQLite file at path with runtime.SQLiteDSN's settings.
// Unless create is set, a path that does not exist is ErrNoFile: a mistyped
// path would otherwise open a new, empty database.
func SQLite(path string, create bool) (*sql.DB, *runtime.Engine, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) && !create {
		return nil, nil, fmt.Errorf("%s: %w", path, ErrNoFile)
	}
	db, err := sql.Open("sqlite", runtime.SQLiteDSN(path))
	if err != nil {
		return nil, nil, fmt.Errorf("open SQLite %s: %w", path, err)
	}
	return db, runtime.SQLite(db), nil
}
