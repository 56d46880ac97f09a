package leasemysql

import (
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/internal/testwait"
	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/internal/systemtest"
)

// A claim that takes turns waits for the claim turn's row while another
// transaction holds it, and takes its tasks once that one ends; a claim
// that does not take turns (a worker alone) never waits for it.
func TestClaimsTakeTurns(t *testing.T) {
	// Not parallel: the server's count of lock waits must be this test's.
	b := systemtest.Setup(t, &harness)
	tasks := []driver.NewTask{{Type: "a", Payload: []byte(`{}`), MaxAttempts: 1}, {Type: "a", Payload: []byte(`{}`), MaxAttempts: 1}}
	_, err := b.Driver.Insert(bg, b.DB.DB, tasks)
	dbtest.Must(t, "enqueue", err)
	claim := func(turns bool) ([]driver.ClaimedTask, error) {
		return b.Driver.Claim(bg, driver.ClaimRequest{Owner: "w", Lease: time.Minute, Types: []string{"a"}, Max: 1, TakeTurns: turns})
	}
	got, err := claim(true) // the first claim that takes turns creates the row
	dbtest.Must(t, "claim", err)
	if len(got) != 1 {
		t.Fatalf("claimed %d tasks, want 1", len(got))
	}

	holder, err := b.DB.BeginTx(bg, nil)
	dbtest.Must(t, "begin", err)
	defer holder.Rollback() //nolint:errcheck // a no-op after Commit
	if _, err := holder.ExecContext(bg, "SELECT scope FROM leasegen_limits WHERE scope = ? FOR UPDATE", claimTurnScope); err != nil {
		t.Fatal(err)
	}
	if got, err := claim(false); err != nil || len(got) != 1 {
		t.Fatalf("a claim that does not take turns: %d tasks, %v; want the other task, without a wait", len(got), err)
	}
	dbtest.Must(t, "enqueue", func() error { _, err := b.Driver.Insert(bg, b.DB.DB, tasks[:1]); return err }())
	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	go func() {
		got, err := claim(true)
		done <- result{len(got), err}
	}()
	testwait.Until(t, func() bool {
		select {
		case r := <-done:
			t.Fatalf("the claim that takes turns ended (%d tasks, %v) while another held its turn", r.n, r.err)
		default:
		}
		waits, err := b.H.LockWaits(b.DB.DB)
		dbtest.Must(t, "count lock waits", err)
		return waits > 0
	}, func() string { return "the claim that takes turns never waited for the turn's row" })
	dbtest.Must(t, "commit", holder.Commit())
	if r := <-done; r.err != nil || r.n != 1 {
		t.Errorf("the claim after its turn: %d tasks, %v; want 1", r.n, r.err)
	}
}
