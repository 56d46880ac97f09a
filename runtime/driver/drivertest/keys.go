package drivertest

import (
	"database/sql"
	"testing"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/internal/bookkeeping"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// A keyed enqueue in a caller's transaction whose snapshot is older than
// a release of its key never takes a slot the release gave away: it
// counts the key's holders as they are committed now (MySQL's locking
// read in REPEATABLE READ), or fails with a conflict (PostgreSQL's
// REPEATABLE READ). The key starts stalled: its holder
// was removed without a release, so the snapshot sees no holder at all.
func testKeyReleaseInOlderSnapshot(t *testing.T, b *Bundle) {
	if b.H.Name == "sqlite" {
		t.Skip("not on SQLite: every transaction begins with the write lock (BEGIN IMMEDIATE), so no release commits beside one")
	}
	tb := b.Driver.Tables()
	key := driver.FlowKey{Type: "k", Key: "acct", Limit: 1}
	task := driver.NewTask{Type: "k", Payload: []byte(`{}`), MaxAttempts: 1}
	ids, err := bookkeeping.InsertKeyed(bg, tb, bookkeeping.KeyedBatch{Tasks: []driver.NewTask{task, task}, Keys: []driver.FlowKey{key, key}})
	dbtest.Must(t, "enqueue two keyed tasks", err)
	_, err = tb.TaskDiscard(bg, ids[0]) // the holder goes, no release
	dbtest.Must(t, "discard the holder", err)

	tx, err := b.DB.BeginTx(bg, &sql.TxOptions{Isolation: sql.LevelRepeatableRead})
	dbtest.Must(t, "begin", err)
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	// The transaction's first read takes its snapshot.
	if _, err := b.Driver.TablesIn(tx).TaskCountByTypeStatus(bg); err != nil {
		t.Fatal(err)
	}
	if _, err := bookkeeping.ReleaseKeys(bg, tb, []driver.FlowKey{key}); err != nil {
		t.Fatalf("release the stalled key: %v", err)
	}
	_, err = bookkeeping.InsertKeyed(bg, b.Driver.TablesIn(tx), bookkeeping.KeyedBatch{Tasks: []driver.NewTask{task}, Keys: []driver.FlowKey{key}})
	if err == nil {
		err = tx.Commit()
	}
	if err != nil && b.Driver.ErrorKind(err) != driver.KindConflict {
		t.Fatalf("keyed enqueue in the older snapshot: %v, want success or a conflict", err)
	}
	counts, err := tb.TaskCountByTypeStatus(bg)
	dbtest.Must(t, "count", err)
	holding := 0
	for _, c := range counts {
		if c.Status == leasetype.StatusQueued {
			holding += c.Tasks
		}
	}
	if holding != 1 {
		t.Errorf("%d tasks of a key with a limit of 1 hold a slot (%v), want 1", holding, counts)
	}
}
