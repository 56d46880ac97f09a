package leasepostgres

import (
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/driver/drivertest"
)

// Renewals write no indexed column, and the table's fillfactor leaves
// room on each page, so PostgreSQL updates the rows heap-only (HOT),
// touching no index: at least 90% of the renewals of a thousand leases
// (pg_stat_user_tables.n_tup_hot_upd; 95% at fillfactor 60, 65% at 80,
// 99% at 50).
func TestRenewalsAreHeapOnlyUpdates(t *testing.T) {
	t.Parallel()
	b := drivertest.Setup(t, &harness)
	reqs := make([]runtime.Request, 1000)
	for i := range reqs {
		reqs[i] = runtime.Request{Type: "renew"}
	}
	_, err := b.Client.EnqueueMany(bg, reqs)
	dbtest.Must(t, "enqueue", err)
	pool := b.DB.Open(t) // its sessions end, and report their counts, when it closes
	d := New(pool)
	runtime.NewEngine(d) // attaches the driver
	claimed, err := d.Claim(bg, driver.ClaimRequest{Owner: "w", Lease: time.Minute, Types: []string{"renew"}, Max: 1000})
	dbtest.Must(t, "claim", err)
	refs := make([]driver.LeaseRef, len(claimed))
	for i, c := range claimed {
		refs[i] = driver.LeaseRef{ID: c.ID, Attempt: c.Attempt}
	}
	before := updateCounts(t, b)
	const rounds = 5
	for range rounds {
		states, err := d.Renew(bg, "w", time.Minute, refs)
		dbtest.Must(t, "renew", err)
		for _, s := range states {
			if !s.Held {
				t.Fatalf("lease of task %d lost", s.Ref.ID)
			}
		}
	}
	pool.Close()
	var after [2]int
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		after = updateCounts(t, b)
		if after[0]-before[0] >= rounds*len(refs) || time.Now().After(deadline) {
			break
		}
	}
	// The counts include the claim's updates, which change status and so
	// are never heap-only.
	renewals := rounds * len(refs)
	updates, hot := after[0]-before[0], after[1]-before[1]
	t.Logf("%d renewals (and %d claims): %d row updates, %d heap-only, %.1f%% of the renewals", renewals, len(refs), updates, hot, 100*float64(hot)/float64(renewals))
	if updates < renewals || hot < renewals*9/10 {
		t.Errorf("%d of %d renewals were heap-only updates, want at least 90%%", hot, renewals)
	}
}

// updateCounts reads the task table's row updates and heap-only ones.
func updateCounts(t *testing.T, b *drivertest.Bundle) [2]int {
	t.Helper()
	return [2]int{
		b.DB.Int(t, "SELECT n_tup_upd FROM pg_stat_user_tables WHERE relname = 'leasegen_tasks'"),
		b.DB.Int(t, "SELECT n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'leasegen_tasks'"),
	}
}
