package runtime

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/leasegen/leasegen/runtime/migrations"
)

// Migrate applies the missing migrations in one write transaction: SQLite's
// DDL is transactional, and the write lock serializes concurrent migrators.
func (s *sqliteStore) Migrate(ctx context.Context) error {
	steps, err := loadMigrations(migrations.SQLite, "sqlite")
	if err != nil {
		return fmt.Errorf("leasegen: read migrations: %w", err)
	}
	return s.immediate(ctx, func(conn *sql.Conn) error {
		return applyMigrations(ctx, conn, steps, sqliteMigrations)
	})
}

const createSQLiteMigrationsTable = `CREATE TABLE IF NOT EXISTS leasegen_schema_migrations (
  version    INTEGER NOT NULL PRIMARY KEY,
  name       TEXT    NOT NULL,
  applied_at INTEGER NOT NULL
)`

const recordSQLiteMigration = "INSERT INTO leasegen_schema_migrations (version, name, applied_at) VALUES (?, ?, CAST(unixepoch('subsec') * 1000 AS INTEGER))"

var sqliteMigrations = migrationDialect{createTable: createSQLiteMigrationsTable, recordVersion: recordSQLiteMigration}
