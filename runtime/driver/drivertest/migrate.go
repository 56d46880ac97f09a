package drivertest

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"sync"
	"testing"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/migrations"
)

// Many processes may start at once and all call Migrate: each version is
// applied once and every call succeeds.
func testMigrateConcurrentAndIdempotent(t *testing.T, h *Harness) {
	db := NewDB(t, h)
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Go(func() {
			// A pool of its own per caller, like separate processes.
			errs[i] = h.migrate(db.Open(t))
		})
	}
	wg.Wait()
	for _, err := range errs {
		dbtest.Must(t, "concurrent migrate", err)
	}
	dbtest.Must(t, "migrate again", h.migrate(db.DB))
	steps, err := migrations.Load(h.New(db.DB).Migrations())
	dbtest.Must(t, "load", err)
	if n := db.Int(t, "SELECT COUNT(*) FROM leasegen_schema_migrations"); n != len(steps) {
		t.Errorf("%d versions recorded, want %d", n, len(steps))
	}
}

// Version3Rows is the INSERT that puts three tasks into a task table at
// schema version 3, given the engine's expressions for now, an hour ago
// and a second ago: 1 finished an hour ago; 2 queued at priority 7; 3
// running on a lease that expired a second ago. CheckUpgradeFromVersion3
// checks them after the upgrade.
func Version3Rows(now, hourAgo, secondAgo string) string {
	return `INSERT INTO leasegen_tasks (id, task_type, status, payload, priority, available_at, max_attempts, created_at, updated_at,
		lease_owner, lease_until, started_at, finished_at, attempt) VALUES
		(1, 'a', 'SUCCESS', '', 0, ` + hourAgo + `, 1, ` + hourAgo + `, ` + hourAgo + `, 'old', ` + hourAgo + `, ` + hourAgo + `, ` + hourAgo + `, 1),
		(2, 'a', 'QUEUED', '', 7, ` + now + `, 1, ` + now + `, ` + now + `, NULL, NULL, NULL, NULL, 0),
		(3, 'a', 'RUNNING', '', 3, ` + hourAgo + `, 2, ` + hourAgo + `, ` + hourAgo + `, 'dead', ` + secondAgo + `, ` + hourAgo + `, NULL, 1)`
}

// CheckIndexes fails t unless db has every index of current and none of
// dropped, counting them with query (one argument: an index name).
func CheckIndexes(t *testing.T, db *DB, query string, current, dropped []string) {
	t.Helper()
	for _, index := range current {
		if db.Int(t, query, index) == 0 {
			t.Errorf("index %s missing", index)
		}
	}
	for _, index := range dropped {
		if db.Int(t, query, index) != 0 {
			t.Errorf("index %s still there", index)
		}
	}
}

// NewDBAtVersion creates a database for t with h whose schema is at
// version (the first version steps of files), applied by apply (the
// driver's migration runner), before the test migrates it further.
func NewDBAtVersion(t *testing.T, h *Harness, files fs.FS, version int, apply func(context.Context, *sql.Conn, []migrations.Step) error) *DB {
	t.Helper()
	db := NewDB(t, h)
	steps, err := migrations.Load(files)
	dbtest.Must(t, "load migrations", err)
	conn, err := db.Conn(bg)
	dbtest.Must(t, "conn", err)
	defer conn.Close()
	dbtest.Must(t, fmt.Sprintf("migrate to version %d", version), apply(bg, conn, steps[:version]))
	return db
}

// migrate checks a new driver of h on db and migrates db with it.
func (h *Harness) migrate(db *sql.DB) error {
	d := h.New(db)
	d.Attach(driver.Hooks{})
	if err := d.Check(bg); err != nil {
		return err
	}
	return d.Migrate(bg)
}
