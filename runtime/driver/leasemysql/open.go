package leasemysql

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// ErrBadDSN reports a DSN that does not parse.
var ErrBadDSN = errors.New("leasegen: the MySQL DSN does not parse (user:pass@tcp(host:3306)/db)")

// Open opens a pool on dsn with what the driver needs added (parseTime,
// loc=UTC, a UTC session time zone), so an operator can paste the DSN they
// have, and 32 idle connections, so a worker's loops do not reconnect all
// the time. It also sets interpolateParams=true unless the DSN says
// otherwise: without it every statement with arguments is prepared on the
// server, run and closed, three round trips instead of one.
func Open(dsn string) (*sql.DB, error) {
	cfg, err := openConfig(dsn)
	if err != nil {
		return nil, err
	}
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadDSN, err)
	}
	db := sql.OpenDB(connector{c})
	db.SetMaxIdleConns(32)
	return db, nil
}

// openConfig is dsn parsed, with what Open adds.
func openConfig(dsn string) (*mysql.Config, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadDSN, err)
	}
	cfg.ParseTime, cfg.Loc = true, time.UTC
	if !strings.Contains(dsn, "interpolateParams=") {
		cfg.InterpolateParams = true
	}
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	cfg.Params["time_zone"] = "'+00:00'"
	return cfg, nil
}

// connector marks the errors of making a connection (a refused dial, a
// server that answers the handshake with an error: too many connections,
// shutting down): nothing was sent on it, so a write is safe to retry.
type connector struct{ sqldriver.Connector }

func (c connector) Connect(ctx context.Context) (sqldriver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, notConnected{err}
	}
	return conn, nil
}

// notConnected is an error of making a connection.
type notConnected struct{ error }

func (e notConnected) Unwrap() error { return e.error }
