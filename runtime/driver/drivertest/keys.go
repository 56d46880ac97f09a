package drivertest

import (
	"database/sql"
	"strconv"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/internal/testwait"
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

// A release counts a holder whose row another transaction changes while
// the release reads the key's holders, whatever the change does to the
// row's index entries: here the holder goes from RUNNING to SUCCESS, the
// release waits for its lock, and it goes back to QUEUED before the lock
// is let go. On MySQL the index of keyed tasks once held the status
// itself: the second change put the holder's entry behind a reader
// waiting on the first, the reader skipped both, and the key's one slot
// went to the waiting task as well (a task that a retry or recovery moved
// from RUNNING to QUEUED while a release counted did the same under load).
func testKeyHoldersWhileTaskMoves(t *testing.T, b *Bundle) {
	if b.H.LockWaits == nil {
		t.Skipf("not on %s: every transaction begins with the write lock, so no release counts beside a change", b.H.Name)
	}
	tb := b.Driver.Tables()
	key := driver.FlowKey{Type: "k", Key: "acct", Limit: 1}
	task := driver.NewTask{Type: "k", Payload: []byte(`{}`), MaxAttempts: 3}
	ids, err := bookkeeping.InsertKeyed(bg, tb, bookkeeping.KeyedBatch{Tasks: []driver.NewTask{task, task}, Keys: []driver.FlowKey{key, key}})
	dbtest.Must(t, "enqueue two keyed tasks", err)
	claimed, err := b.Driver.Claim(bg, driver.ClaimRequest{Owner: "w", Lease: time.Minute, Types: []string{"k"}, Max: 2})
	dbtest.Must(t, "claim", err)
	if len(claimed) != 1 || claimed[0].ID != ids[0] {
		t.Fatalf("claimed %+v, want the first task alone", claimed)
	}

	mover, err := b.DB.BeginTx(bg, nil)
	dbtest.Must(t, "begin", err)
	defer mover.Rollback() //nolint:errcheck // a no-op after Commit
	holder := strconv.FormatInt(int64(ids[0]), 10)
	if _, err := mover.ExecContext(bg, "UPDATE leasegen_tasks SET status = 'SUCCESS' WHERE id = "+holder); err != nil {
		t.Fatal(err)
	}
	released := make(chan error, 1)
	go func() {
		_, err := bookkeeping.ReleaseKeys(bg, tb, []driver.FlowKey{key})
		released <- err
	}()
	var releaseErr error
	finished := false
	testwait.Until(t, func() bool {
		select {
		case releaseErr = <-released:
			finished = true
			return true
		default:
		}
		waits, err := b.H.LockWaits(b.DB.DB)
		dbtest.Must(t, "count lock waits", err)
		return waits > 0
	}, func() string { return "the release neither ended nor waited for the holder's lock" })
	if _, err := mover.ExecContext(bg, "UPDATE leasegen_tasks SET status = 'QUEUED' WHERE id = "+holder); err != nil {
		t.Fatal(err)
	}
	dbtest.Must(t, "commit the move", mover.Commit())
	if !finished {
		releaseErr = <-released
	}
	dbtest.Must(t, "release", releaseErr)
	counts, err := tb.TaskCountByTypeStatus(bg)
	dbtest.Must(t, "count", err)
	byStatus := map[leasetype.Status]int{}
	for _, c := range counts {
		byStatus[c.Status] += c.Tasks
	}
	if byStatus[leasetype.StatusQueued] != 1 || byStatus[leasetype.StatusWaiting] != 1 {
		t.Errorf("after the release: %v, want the moved holder QUEUED and the other task still WAITING", byStatus)
	}
}
