package leasepostgres

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/migrations"
)

// migrateLockKey is the advisory lock that serializes concurrent Migrate
// calls from any number of processes ("leasegen" in ASCII).
const migrateLockKey = 0x6c65617365676e

const createMigrationsTable = `CREATE TABLE IF NOT EXISTS leasegen_schema_migrations (
  version    INTEGER     NOT NULL PRIMARY KEY,
  name       TEXT        NOT NULL,
  applied_at TIMESTAMPTZ NOT NULL
)`

// Migrate applies the missing migrations under an advisory lock held on
// one connection. Each statement is idempotent, so a crash between a step
// and its record is repaired by the next run.
func (s *store) Migrate(ctx context.Context) error {
	steps, err := migrations.Load(pgMigrationFiles)
	if err != nil {
		return fmt.Errorf("leasegen: read migrations: %w", err)
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("leasegen: migrate: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", migrateLockKey); err != nil {
		return fmt.Errorf("leasegen: migrate: take lock: %w", err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", migrateLockKey) //nolint:errcheck // the lock also ends with the session
	return sqlbuild.ApplyMigrations(ctx, conn, steps, pgMigrations)
}

const recordMigration = "INSERT INTO leasegen_schema_migrations (version, name, applied_at) VALUES ($1, $2, now())"

var pgMigrations = sqlbuild.MigrationDialect{CreateTable: createMigrationsTable, RecordVersion: recordMigration, Denied: deniedPrivilege}

// deniedPrivilege reports a statement the user's grants refuse.
func deniedPrivilege(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == codeInsufficientPrivs
}

// pgMigrationFiles is the PostgreSQL folder of the embedded migrations.
var pgMigrationFiles, _ = fs.Sub(migrations.Postgres, "postgres") // a valid folder name: no error

// Migrations returns the engine's migration files.
func (s *store) Migrations() fs.FS { return pgMigrationFiles }
