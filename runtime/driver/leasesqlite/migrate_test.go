package leasesqlite

import (
	"context"
	"database/sql"
	"testing"

	"github.com/leasegen/leasegen/runtime/driver/drivertest"
	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/internal/systemtest"
	"github.com/leasegen/leasegen/runtime/migrations"
)

// A database at schema version 3 upgrades in place, with the indexes of
// the current schema.
func TestMigrateFromVersion3(t *testing.T) {
	t.Parallel()
	db := drivertest.NewDBAtVersion(t, &harness, sqliteMigrationFiles, 3, func(ctx context.Context, conn *sql.Conn, steps []migrations.Step) error {
		return sqlbuild.ApplyMigrations(ctx, conn, steps, sqliteMigrations)
	})
	const ms = "CAST(unixepoch('subsec') * 1000 AS INTEGER)"
	db.MustExec(t, drivertest.Version3Rows(ms, ms+" - 3600000", ms+" - 1000"))

	b := systemtest.SetupOn(t, &harness, db)
	drivertest.CheckIndexes(t, db, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = ?",
		[]string{"leasegen_tasks_queue", "leasegen_tasks_leases", "leasegen_tasks_by_owner", "leasegen_tasks_finished", "leasegen_tasks_key"},
		[]string{"leasegen_tasks_claim", "leasegen_tasks_recover", "leasegen_tasks_owner", "leasegen_tasks_stats"})
	systemtest.CheckUpgradeFromVersion3(t, b)
}
