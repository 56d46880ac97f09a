package gen

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/leasegen/leasegen/internal/dbtest/pgtest"
)

// The rendered PostgreSQL schema, applied as one script the way a
// migration tool or psql would, creates every table the runtime uses.
func TestPostgresSchemaApplies(t *testing.T) {
	t.Parallel()
	files, err := Generate(Config{Dir: "../testdata/example/billing", Schema: "schema.postgres.sql", Engine: "postgres"})
	if err != nil {
		t.Fatal(err)
	}
	script := files[len(files)-1].Content
	db, err := sql.Open("pgx", pgtest.New(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, string(script)); err != nil {
		t.Fatalf("apply the rendered schema: %v", err)
	}
	var tables string
	err = db.QueryRowContext(ctx, `SELECT string_agg(table_name, ',' ORDER BY table_name) FROM information_schema.tables
		WHERE table_schema = 'public' AND table_name LIKE 'leasegen_%'`).Scan(&tables)
	if err != nil {
		t.Fatal(err)
	}
	want := "leasegen_attempts,leasegen_count_turn,leasegen_counts,leasegen_flow_keys,leasegen_flow_slots,leasegen_idempotency_keys,leasegen_limits,leasegen_parent_types,leasegen_paused_types,leasegen_schedules,leasegen_task_deps,leasegen_tasks,leasegen_throughput,leasegen_workers,leasegen_workflow_steps,leasegen_workflows"
	if tables != want {
		t.Errorf("tables %s, want %s", tables, want)
	}
	if !strings.Contains(string(script), "-- Task types: ") {
		t.Errorf("the script does not name the package's task types:\n%.300s", script)
	}
}
