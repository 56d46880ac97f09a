package leasepostgres

import (
	"context"
	"database/sql"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// tables runs the bookkeeping queries on q: the pool, or a transaction of
// InTx.
type tables struct {
	s   *store
	q   nativeArrays // raw, with sqlc's arrays as slices
	raw driver.DBTX
	sqlbuild.Writes
}

// Tables returns the bookkeeping queries on the pool.
func (s *store) Tables() driver.Tables {
	return tables{s: s, q: s.arrays, raw: s.db, Writes: sqlbuild.Writes{Retry: s.retry}}
}

// TablesIn returns the bookkeeping queries in the caller's transaction.
func (s *store) TablesIn(tx *sql.Tx) driver.Tables {
	return tables{s: s, q: nativeArrays{tx}, raw: tx, Writes: sqlbuild.Writes{InTx: true}}
}

// InTx runs fn in a READ COMMITTED transaction that the server ends when
// it sits idle (txSessionIdle), again after a deadlock, a serialization
// failure or a lock that was not available. Within a transaction it runs
// fn in it.
func (t tables) InTx(ctx context.Context, fn func(driver.Tables) error) error {
	if t.Writes.InTx {
		return fn(t)
	}
	return t.s.retry(ctx, func() error {
		return t.s.inTx(ctx, t.s.db, "", func(tx *sql.Tx) error {
			return fn(tables{s: t.s, q: nativeArrays{tx}, raw: tx, Writes: sqlbuild.Writes{InTx: true}})
		})
	})
}

func (t tables) Now(ctx context.Context) (time.Time, error) {
	now, err := t.s.q.ScheduleNow(ctx, t.q)
	return now.UTC(), err
}

func (t tables) TaskInsert(ctx context.Context, tasks []driver.NewTask) ([]leasetype.TaskID, error) {
	return t.s.Insert(ctx, t.raw, tasks)
}

func (t tables) MigrationList(ctx context.Context) (map[int]time.Time, error) {
	return sqlbuild.AppliedMigrations(ctx, t.raw, time.Time.UTC)
}

func nullID(id leasetype.TaskID) sql.NullInt64 {
	return sql.NullInt64{Int64: int64(id), Valid: id != 0}
}
