package leasemysql

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"

	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/migrations"
)

// migrateLockName is the GET_LOCK name that serializes concurrent Migrate
// calls, from any number of processes.
const migrateLockName = "leasegen_migrate"

const createMigrationsTable = `CREATE TABLE IF NOT EXISTS leasegen_schema_migrations (
  version    INT          NOT NULL PRIMARY KEY,
  name       VARCHAR(255) NOT NULL,
  applied_at DATETIME(3)  NOT NULL
) ENGINE = InnoDB`

// Migrate applies the missing migrations under a named lock held on one
// connection. MySQL commits DDL implicitly, so each version is recorded right
// after its statements; every statement is idempotent, so a crash between
// the two is repaired by the next run.
func (s *store) Migrate(ctx context.Context) error {
	steps, err := migrations.Load(mysqlMigrationFiles)
	if err != nil {
		return fmt.Errorf("leasegen: read migrations: %w", err)
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("leasegen: migrate: %w", err)
	}
	defer conn.Close()
	var got sql.NullInt64
	if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, 60)", migrateLockName).Scan(&got); err != nil {
		return fmt.Errorf("leasegen: migrate: take lock: %w", err)
	}
	if got.Int64 != 1 {
		return fmt.Errorf("leasegen: migrate: another process held the migration lock for 60s")
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT RELEASE_LOCK(?)", migrateLockName) //nolint:errcheck // the lock also ends with the connection

	return sqlbuild.ApplyMigrations(ctx, conn, steps, mysqlMigrations)
}

const recordMigration = "INSERT INTO leasegen_schema_migrations (version, name, applied_at) VALUES (?, ?, UTC_TIMESTAMP(3))"

var mysqlMigrations = sqlbuild.MigrationDialect{CreateTable: createMigrationsTable, RecordVersion: recordMigration, Denied: deniedPrivilege}

// mysqlMigrationFiles is the MySQL folder of the embedded migrations.
var mysqlMigrationFiles, _ = fs.Sub(migrations.MySQL, "mysql") // a valid folder name: no error

// Migrations returns the engine's migration files.
func (s *store) Migrations() fs.FS { return mysqlMigrationFiles }
