package leasepostgres

import (
	"context"
	"database/sql"

	"github.com/lib/pq"

	"github.com/leasegen/leasegen/runtime/driver/leasepostgres/internal/pgdb"
)

// nativeArrays hands sqlc's array arguments to pgx as Go slices. sqlc's
// database/sql code wraps each in pq.Array, whose value is PostgreSQL's
// text form; pgx then parses that text back into values to send them in
// binary, which cost a 1,000-row batch insert a quarter of its client CPU.
type nativeArrays struct{ db pgdb.DBTX }

func (n nativeArrays) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return n.db.ExecContext(ctx, query, unwrapArrays(args)...)
}

func (n nativeArrays) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	return n.db.PrepareContext(ctx, query)
}

func (n nativeArrays) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return n.db.QueryContext(ctx, query, unwrapArrays(args)...)
}

func (n nativeArrays) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return n.db.QueryRowContext(ctx, query, unwrapArrays(args)...)
}

// unwrapArrays replaces, in place, each pq array of args by its slice.
func unwrapArrays(args []any) []any {
	for i, a := range args {
		switch v := a.(type) {
		case *pq.StringArray:
			args[i] = []string(*v)
		case *pq.ByteaArray:
			args[i] = [][]byte(*v)
		case *pq.Int64Array:
			args[i] = []int64(*v)
		case *pq.Int32Array:
			args[i] = []int32(*v)
		case *pq.BoolArray:
			args[i] = []bool(*v)
		case *pq.Float64Array:
			args[i] = []float64(*v)
		}
	}
	return args
}
