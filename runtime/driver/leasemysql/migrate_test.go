package leasemysql

import (
	"context"
	"database/sql"
	"testing"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime/driver/drivertest"
	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/internal/systemtest"
	"github.com/leasegen/leasegen/runtime/migrations"
)

// checkIndexes fails t unless the task table has the current schema's
// indexes and none of those that versions 3 and 4 dropped.
func checkIndexes(t *testing.T, db *drivertest.DB) {
	t.Helper()
	drivertest.CheckIndexes(t, db, "SELECT COUNT(*) FROM information_schema.statistics WHERE table_schema = DATABASE() AND index_name = ?",
		[]string{"leasegen_tasks_due", "leasegen_tasks_by_owner", "leasegen_tasks_key"},
		[]string{"leasegen_tasks_claim", "leasegen_tasks_owner", "leasegen_tasks_stats", "leasegen_tasks_finished", "leasegen_tasks_queue", "leasegen_tasks_recover"})
}

// A database at schema version 3 upgrades in place, and version 4 can run
// again after a crash between its statements and its record: MySQL commits
// each DDL statement, so it can lose the record.
func TestMigrateFromVersion3(t *testing.T) {
	t.Parallel()
	db := drivertest.NewDBAtVersion(t, &harness, mysqlMigrationFiles, 3, func(ctx context.Context, conn *sql.Conn, steps []migrations.Step) error {
		return sqlbuild.ApplyMigrations(ctx, conn, steps, mysqlMigrations)
	})
	db.MustExec(t, drivertest.Version3Rows("NOW(3)", "NOW(3) - INTERVAL 1 HOUR", "NOW(3) - INTERVAL 1 SECOND"))

	b := systemtest.SetupOn(t, &harness, db)
	db.MustExec(t, "DELETE FROM leasegen_schema_migrations WHERE version = 4")
	dbtest.Must(t, "migrate again after a lost record", b.Engine.Migrate(bg))
	checkIndexes(t, db)
	systemtest.CheckUpgradeFromVersion3(t, b)
}

// A migrated database has the current indexes, and the claim index orders
// priority descending, as the claim's ORDER BY.
func TestMigratedIndexes(t *testing.T) {
	t.Parallel()
	b := systemtest.Setup(t, &harness)
	checkIndexes(t, b.DB)
	var collation sql.NullString
	err := b.DB.QueryRow(`SELECT collation FROM information_schema.statistics WHERE table_schema = DATABASE()
		AND index_name = 'leasegen_tasks_due' AND column_name = 'due_priority'`).Scan(&collation)
	dbtest.Must(t, "index order", err)
	if collation.String != "D" {
		t.Errorf("claim index orders priority %q, want D (descending)", collation.String)
	}
}

// Version 16 makes a flow_state that version 15 created VIRTUAL a stored
// column, keeping the keyed tasks' states and the flow index, and does
// nothing to a table version 15 made with it stored.
func TestMigrateStoresFlowState(t *testing.T) {
	t.Parallel()
	db := drivertest.NewDBAtVersion(t, &harness, mysqlMigrationFiles, 15, func(ctx context.Context, conn *sql.Conn, steps []migrations.Step) error {
		return sqlbuild.ApplyMigrations(ctx, conn, steps, mysqlMigrations)
	})
	checkFlowState(t, db, "STORED GENERATED")
	db.MustExec(t, `ALTER TABLE leasegen_tasks DROP INDEX leasegen_tasks_flow, DROP COLUMN flow_state,
		ADD COLUMN flow_state VARCHAR(8) CHARACTER SET ascii COLLATE ascii_bin
		  AS (CASE WHEN flow_key IS NULL THEN NULL WHEN status = 'WAITING' THEN 'WAITING'
		           WHEN status IN ('QUEUED', 'RUNNING', 'CANCEL_REQUESTED', 'FAILED') THEN 'HOLDING' ELSE 'DONE' END) VIRTUAL,
		ADD INDEX leasegen_tasks_flow (flow_key, task_type, flow_state, id)`)
	checkFlowState(t, db, "VIRTUAL GENERATED")
	db.MustExec(t, `INSERT INTO leasegen_tasks (task_type, payload, status, flow_key, available_at, due_at, created_at, updated_at, max_attempts)
		VALUES ('a', '{}', 'WAITING', 'k', NOW(3), NOW(3), NOW(3), NOW(3), 3), ('a', '{}', 'QUEUED', NULL, NOW(3), NOW(3), NOW(3), NOW(3), 3)`)

	b := systemtest.SetupOn(t, &harness, db)
	checkFlowState(t, db, "STORED GENERATED")
	drivertest.CheckIndexes(t, db, "SELECT COUNT(*) FROM information_schema.statistics WHERE table_schema = DATABASE() AND index_name = ?",
		[]string{"leasegen_tasks_flow"}, nil)
	if n := db.Int(t, "SELECT COUNT(*) FROM leasegen_tasks WHERE flow_key = 'k' AND flow_state = 'WAITING'"); n != 1 {
		t.Errorf("%d keyed tasks WAITING in flow_state after the conversion, want 1", n)
	}
	db.MustExec(t, "DELETE FROM leasegen_schema_migrations WHERE version = 16")
	dbtest.Must(t, "migrate again after a lost record", b.Engine.Migrate(bg))
	checkFlowState(t, db, "STORED GENERATED")
}

// checkFlowState fails t unless leasegen_tasks.flow_state is generated as
// extra says (information_schema.columns.extra).
func checkFlowState(t *testing.T, db *drivertest.DB, extra string) {
	t.Helper()
	var got string
	err := db.QueryRow(`SELECT extra FROM information_schema.columns
		WHERE table_schema = DATABASE() AND table_name = 'leasegen_tasks' AND column_name = 'flow_state'`).Scan(&got)
	dbtest.Must(t, "read flow_state's definition", err)
	if got != extra {
		t.Errorf("flow_state is %q, want %q", got, extra)
	}
}
