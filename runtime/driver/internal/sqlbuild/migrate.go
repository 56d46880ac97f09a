package sqlbuild

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/leasegen/leasegen/runtime/migrations"
)

// ApplyMigrations runs, on conn, every step not yet recorded in
// leasegen_schema_migrations, recording each after its statements. The
// caller serializes concurrent migrators (a named lock, a write transaction).
// When every step is applied it runs no DDL at all, so a service whose
// database user may only read and write rows can call Migrate at start.
func ApplyMigrations(ctx context.Context, conn *sql.Conn, steps []migrations.Step, d MigrationDialect) error {
	applied, err := appliedVersions(ctx, conn)
	if err != nil {
		if _, cerr := conn.ExecContext(ctx, d.CreateTable); cerr != nil {
			return d.explain("create leasegen_schema_migrations", cerr)
		}
		if applied, err = appliedVersions(ctx, conn); err != nil {
			return fmt.Errorf("leasegen: migrate: %w", err)
		}
	}
	for _, m := range steps {
		if applied[m.Version] {
			continue
		}
		for _, stmt := range m.Statements {
			if _, err := conn.ExecContext(ctx, stmt); err != nil {
				return d.explain("migration "+m.Name, err)
			}
		}
		if _, err := conn.ExecContext(ctx, d.RecordVersion, m.Version, m.Name); err != nil {
			return d.explain("record migration "+m.Name, err)
		}
	}
	return nil
}

func appliedVersions(ctx context.Context, conn *sql.Conn) (map[int]bool, error) {
	rows, err := conn.QueryContext(ctx, "SELECT version FROM leasegen_schema_migrations")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	applied := map[int]bool{}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		applied[v] = true
	}
	return applied, rows.Err()
}

// MigrationDialect is what applyMigrations needs of an engine besides
// its steps.
type MigrationDialect struct {
	CreateTable   string // creates leasegen_schema_migrations if missing
	RecordVersion string // records (version, name) as applied
	// Denied reports a statement the user's grants refuse; nil for an
	// engine without grants.
	Denied func(error) bool
}

// explain wraps a failed migration statement; a refused one says which
// privileges migrating needs: the runtime's least-privilege user may not
// change the schema.
func (d MigrationDialect) explain(what string, err error) error {
	if d.Denied != nil && d.Denied(err) {
		return fmt.Errorf("leasegen: %s: %w: run Migrate (or apply runtime/migrations) as a user with CREATE, ALTER, INDEX and DROP on the database; workers and clients need only SELECT, INSERT, UPDATE, DELETE", what, err)
	}
	return fmt.Errorf("leasegen: %s: %w", what, err)
}
