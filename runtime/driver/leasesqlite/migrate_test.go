package leasesqlite

import (
	"testing"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime/driver/drivertest"
	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/migrations"
)

// A database at schema version 3 upgrades in place, with the indexes of
// the current schema.
func TestMigrateFromVersion3(t *testing.T) {
	t.Parallel()
	db := drivertest.NewDB(t, &harness)
	steps, err := migrations.Load(sqliteMigrationFiles)
	dbtest.Must(t, "load migrations", err)
	conn, err := db.Conn(bg)
	dbtest.Must(t, "conn", err)
	dbtest.Must(t, "migrate to version 3", sqlbuild.ApplyMigrations(bg, conn, steps[:3], sqliteMigrations))
	conn.Close()
	const ms = "CAST(unixepoch('subsec') * 1000 AS INTEGER)"
	db.MustExec(t, drivertest.Version3Rows(ms, ms+" - 3600000", ms+" - 1000"))

	b := drivertest.SetupOn(t, &harness, db)
	drivertest.CheckIndexes(t, db, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = ?",
		[]string{"leasegen_tasks_queue", "leasegen_tasks_leases", "leasegen_tasks_by_owner", "leasegen_tasks_finished", "leasegen_tasks_key"},
		[]string{"leasegen_tasks_claim", "leasegen_tasks_recover", "leasegen_tasks_owner", "leasegen_tasks_stats"})
	drivertest.CheckUpgradeFromVersion3(t, b)
}
