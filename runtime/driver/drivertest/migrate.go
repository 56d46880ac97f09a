package drivertest

import (
	"sync"
	"testing"

	"github.com/leasegen/leasegen/internal/dbtest"
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
			errs[i] = h.engine(db.Open(t)).Migrate(bg)
		})
	}
	wg.Wait()
	for _, err := range errs {
		dbtest.Must(t, "concurrent migrate", err)
	}
	dbtest.Must(t, "migrate again", h.engine(db.DB).Migrate(bg))
	steps, err := migrations.Load(h.New(db.DB).Migrations())
	dbtest.Must(t, "load", err)
	if n := db.Int(t, "SELECT COUNT(*) FROM leasegen_schema_migrations"); n != len(steps) {
		t.Errorf("%d versions recorded, want %d", n, len(steps))
	}
}
