package leasemysql

import (
	"context"
	"database/sql"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/driver/leasemysql/internal/mysqldb"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// tables runs the bookkeeping queries on q: the pool, or a transaction of
// InTx.
type tables struct {
	s *store
	q mysqldb.DBTX
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

// InTx runs fn in a READ COMMITTED transaction on a bounded session (see
// claimSessionIdle), again after a deadlock or a lock wait that timed out.
// Within a transaction it runs fn in it.
func (t tables) InTx(ctx context.Context, fn func(driver.Tables) error) error {
	if t.Writes.InTx {
		return fn(t)
	}
	return t.s.retry(ctx, func() error {
		return t.s.boundedTx(ctx, claimSessionIdle, func(tx mysqldb.DBTX) error {
			return fn(tables{s: t.s, q: tx, Writes: sqlbuild.Writes{InTx: true}})
		})
	})
}

func (t tables) Now(ctx context.Context) (time.Time, error) { return t.s.q.ScheduleNow(ctx, t.q) }

func (t tables) TaskInsert(ctx context.Context, tasks []driver.NewTask) ([]leasetype.TaskID, error) {
	return t.s.Insert(ctx, t.q, tasks)
}

func (t tables) MigrationList(ctx context.Context) (map[int]time.Time, error) {
	return sqlbuild.AppliedMigrations(ctx, t.q, func(at time.Time) time.Time { return at })
}

func nullID(id leasetype.TaskID) sql.NullInt64 {
	return sql.NullInt64{Int64: int64(id), Valid: id != 0}
}
