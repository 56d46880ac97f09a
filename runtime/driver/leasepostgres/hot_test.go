package leasepostgres

import (
	"fmt"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/internal/testwait"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/internal/systemtest"
)

// Renewals write no indexed column, so PostgreSQL updates the rows
// heap-only (HOT), touching no index (pg_stat_user_tables.n_tup_hot_upd).
// Ten leases on one page with room for their new versions: every renewal
// is heap-only, whatever the machine's load, and none would be if a
// renewal moved an index entry. How many renewals stay heap-only on a
// large table depends on pruning, hence on the fillfactor (95% of a
// thousand leases' at 60, 65% at 80, 99% at 50, unloaded) and on the
// snapshots other sessions hold: the benchmarks' matter, not this test's.
func TestRenewalsAreHeapOnlyUpdates(t *testing.T) {
	t.Parallel()
	b := systemtest.Setup(t, &harness)
	b.DB.MustExec(t, "ALTER TABLE leasegen_tasks SET (autovacuum_enabled = false)") // no ANALYZE's snapshot meanwhile
	reqs := make([]runtime.Request, 10)
	for i := range reqs {
		reqs[i] = runtime.Request{Type: "renew"}
	}
	_, err := b.Client.EnqueueMany(bg, reqs)
	dbtest.Must(t, "enqueue", err)
	if pages := b.DB.Int(t, "SELECT COUNT(DISTINCT (ctid::text::point)[0]) FROM leasegen_tasks"); pages != 1 {
		t.Fatalf("the ten tasks are on %d pages, want one", pages)
	}
	// The claim runs on a pool of its own too, so that its updates are
	// reported before the renewals are counted.
	start := updateCounts(t, b)
	claimer := driverOn(t, b)
	claimed, err := claimer.Claim(bg, driver.ClaimRequest{Owner: "w", Lease: time.Minute, Types: []string{"renew"}, Max: len(reqs)})
	dbtest.Must(t, "claim", err)
	claimer.DB().Close()
	waitForUpdates(t, b, start, len(claimed))
	refs := make([]driver.LeaseRef, len(claimed))
	for i, c := range claimed {
		refs[i] = driver.LeaseRef{ID: c.ID, Attempt: c.Attempt}
	}
	renewals, hot := renewalRound(t, b, refs)
	if hot != renewals {
		t.Errorf("%d of %d renewals were heap-only updates, want all; sessions of the database holding a snapshot: %s",
			hot, renewals, snapshotHolders(t, b))
	}
}

// snapshotHolders lists the other sessions of b's database that hold a
// snapshot, which keeps PostgreSQL from pruning the rows' old versions.
func snapshotHolders(t *testing.T, b *systemtest.Bundle) string {
	t.Helper()
	var holders string
	err := b.DB.QueryRow(`SELECT COALESCE(string_agg(backend_type || ' ' || COALESCE(state, '') || ' xmin age ' || age(backend_xmin) ||
		' ' || left(query, 60), '; '), 'none') FROM pg_stat_activity
		WHERE datname = current_database() AND backend_xmin IS NOT NULL AND pid <> pg_backend_pid()`).Scan(&holders)
	dbtest.Must(t, "read pg_stat_activity", err)
	return holders
}

// renewalRound renews refs five times on a pool of its own and returns
// the renewals and the table's heap-only updates they made, read once the
// pool's sessions have ended and reported their counts.
func renewalRound(t *testing.T, b *systemtest.Bundle, refs []driver.LeaseRef) (renewals, hot int) {
	t.Helper()
	before := updateCounts(t, b)
	d := driverOn(t, b)
	const rounds = 2 // the ten rows' versions fit on their page unpruned
	for range rounds {
		states, err := d.Renew(bg, "w", time.Minute, refs)
		dbtest.Must(t, "renew", err)
		for _, s := range states {
			if !s.Held {
				t.Fatalf("lease of task %d lost", s.Ref.ID)
			}
		}
	}
	d.DB().Close()
	renewals = rounds * len(refs)
	return renewals, waitForUpdates(t, b, before, renewals)[1] - before[1]
}

// driverOn returns a driver on a pool of its own, which the caller closes
// (PostgreSQL reports a session's counts when it ends).
func driverOn(t *testing.T, b *systemtest.Bundle) driver.Driver {
	t.Helper()
	d := New(b.DB.Open(t))
	runtime.NewEngine(d) // attaches the driver
	return d
}

// waitForUpdates waits until the table's counts show n row updates since
// before, and returns them.
func waitForUpdates(t *testing.T, b *systemtest.Bundle, before [2]int, n int) [2]int {
	t.Helper()
	var after [2]int
	testwait.Until(t, func() bool { after = updateCounts(t, b); return after[0]-before[0] >= n }, func() string {
		return fmt.Sprintf("%d row updates reported, want %d", after[0]-before[0], n)
	})
	return after
}

// updateCounts reads the task table's row updates and heap-only ones.
func updateCounts(t *testing.T, b *systemtest.Bundle) [2]int {
	t.Helper()
	return [2]int{
		b.DB.Int(t, "SELECT n_tup_upd FROM pg_stat_user_tables WHERE relname = 'leasegen_tasks'"),
		b.DB.Int(t, "SELECT n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'leasegen_tasks'"),
	}
}
