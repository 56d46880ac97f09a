package leasepostgres

import (
	"database/sql"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// Open opens a pool on a PostgreSQL URL or keyword/value DSN
// ("postgres://user:pw@host:5432/db", "host=db user=app dbname=app") with
// the pgx driver. Errors never repeat the DSN: it may hold a password.
func Open(dsn string) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("%w: it must be a postgres:// URL or key=value pairs", ErrBadDSN)
	}
	return stdlib.OpenDB(*cfg), nil
}

// ErrBadDSN reports a DSN that does not parse.
var ErrBadDSN = fmt.Errorf("leasegen: bad PostgreSQL DSN")
