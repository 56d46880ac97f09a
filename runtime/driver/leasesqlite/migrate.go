package leasesqlite

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"

	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/migrations"
)

// Migrate applies the missing migrations in one write transaction: SQLite's
// DDL is transactional, and the write lock serializes concurrent migrators.
func (s *store) Migrate(ctx context.Context) error {
	steps, err := migrations.Load(sqliteMigrationFiles)
	if err != nil {
		return fmt.Errorf("leasegen: read migrations: %w", err)
	}
	return s.immediate(ctx, func(conn *sql.Conn) error {
		return sqlbuild.ApplyMigrations(ctx, conn, steps, sqliteMigrations)
	})
}

const createSQLiteMigrationsTable = `CREATE TABLE IF NOT EXISTS leasegen_schema_migrations (
  version    INTEGER NOT NULL PRIMARY KEY,
  name       TEXT    NOT NULL,
  applied_at INTEGER NOT NULL
)`

const recordSQLiteMigration = "INSERT INTO leasegen_schema_migrations (version, name, applied_at) VALUES (?, ?, CAST(unixepoch('subsec') * 1000 AS INTEGER))"

var sqliteMigrations = sqlbuild.MigrationDialect{CreateTable: createSQLiteMigrationsTable, RecordVersion: recordSQLiteMigration}

// sqliteMigrationFiles is the SQLite folder of the embedded migrations.
var sqliteMigrationFiles, _ = fs.Sub(migrations.SQLite, "sqlite") // a valid folder name: no error

// Migrations returns the engine's migration files.
func (s *store) Migrations() fs.FS { return sqliteMigrationFiles }
