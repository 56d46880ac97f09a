package leasesqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/driver/leasesqlite/internal/sqlitedb"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// tables runs the bookkeeping queries on q: the pool, or the connection
// of an InTx write transaction.
type tables struct {
	s *store
	q sqlitedb.DBTX
	sqlbuild.Writes
}

// Tables returns the bookkeeping queries on the pool.
func (s *store) Tables() driver.Tables {
	return tables{s: s, q: s.db, Writes: sqlbuild.Writes{Retry: s.retry}}
}

// TablesIn returns the bookkeeping queries in the caller's transaction.
func (s *store) TablesIn(tx *sql.Tx) driver.Tables {
	return tables{s: s, q: tx, Writes: sqlbuild.Writes{InTx: true}}
}

// InTx runs fn in a write transaction taken at BEGIN (BEGIN IMMEDIATE):
// SQLite has one writer at a time, so every InTx, and every other write,
// waits for the one in progress; again after the database stayed busy
// past the busy timeout. Within a transaction it runs fn in it.
func (t tables) InTx(ctx context.Context, fn func(driver.Tables) error) error {
	if t.Writes.InTx {
		return fn(t)
	}
	return t.s.immediate(ctx, func(conn *sql.Conn) error {
		return fn(tables{s: t.s, q: conn, Writes: sqlbuild.Writes{InTx: true}})
	})
}

func (t tables) Now(ctx context.Context) (time.Time, error) {
	ms, err := t.s.q.ScheduleNow(ctx, t.q)
	return fromMillis(ms), err
}

func (t tables) TaskInsert(ctx context.Context, tasks []driver.NewTask) ([]leasetype.TaskID, error) {
	if t.Writes.InTx {
		return t.s.insertAll(ctx, t.q, tasks)
	}
	return t.s.Insert(ctx, t.q, tasks)
}

func (t tables) MigrationList(ctx context.Context) (map[int]time.Time, error) {
	return sqlbuild.AppliedMigrations(ctx, t.q, fromMillis)
}

func nullMillis(t time.Time) sql.NullInt64 {
	return sql.NullInt64{Int64: t.UnixMilli(), Valid: !t.IsZero()}
}
