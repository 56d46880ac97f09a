package leasepostgres

import (
	"sync"
	"testing"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/internal/dbtest/pgtest"
)

// A pool from Open keeps the connections a worker's loops use at once
// instead of closing all but database/sql's default 2 of them.
func TestOpenKeepsIdleConnections(t *testing.T) {
	t.Parallel()
	db, err := Open(pgtest.New(t))
	dbtest.Must(t, "open", err)
	defer db.Close()
	const busy = 8
	var ready, release sync.WaitGroup
	ready.Add(busy)
	release.Add(1)
	var wg sync.WaitGroup
	for range busy {
		wg.Go(func() {
			tx, err := db.BeginTx(bg, nil) // holds a connection until released
			ready.Done()
			if err != nil {
				t.Error(err)
				return
			}
			release.Wait()
			_ = tx.Rollback()
		})
	}
	ready.Wait()
	release.Done()
	wg.Wait()
	if idle := db.Stats().Idle; idle != busy {
		t.Errorf("%d idle connections after %d were in use at once, want %d", idle, busy, busy)
	}
}
