package drivertest

import (
	"database/sql"
	"maps"
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

// Fairness keys share the claims by weight while their releases keep up
// with the claims: two keys of weight 2 and 1 (shares of 200 and 100)
// with long waiting lines, claimed 10 at a time by one owner who releases
// the keys after each claim, start 2 to 1 after the first 300 starts
// (which take the tasks queued at the enqueue). Releases that lag the
// claims move it toward 1 to 1: the tasks one release queues are due
// from one instant, and the lighter key's, with the lower ids, go first
// (measured with this case: releases two claims of 100 behind gave 300
// and 300).
func testFairKeysShareByWeight(t *testing.T, b *Bundle) {
	const (
		each   = 600
		batch  = 10
		warmup = 300
	)
	heavy := driver.FlowKey{Type: "f", Key: "heavy", Limit: driver.NoKeyLimit, Share: 200}
	light := driver.FlowKey{Type: "f", Key: "light", Limit: driver.NoKeyLimit, Share: 100}
	var batchKeys []driver.FlowKey
	var tasks []driver.NewTask
	for range each {
		batchKeys = append(batchKeys, heavy, light)
		tasks = append(tasks, driver.NewTask{Type: "f", Payload: []byte(`{}`), MaxAttempts: 1}, driver.NewTask{Type: "f", Payload: []byte(`{}`), MaxAttempts: 1})
	}
	tb := b.Driver.Tables()
	_, err := bookkeeping.InsertKeyed(bg, tb, bookkeeping.KeyedBatch{Tasks: tasks, Keys: batchKeys})
	dbtest.Must(t, "enqueue", err)

	starts := map[string]int{}
	var first map[string]int
	for starts["heavy"]+starts["light"] < 3*warmup {
		claimed, err := b.Driver.Claim(bg, driver.ClaimRequest{Owner: "w", Lease: time.Minute, Types: []string{"f"}, Max: batch})
		dbtest.Must(t, "claim", err)
		if len(claimed) == 0 {
			t.Fatalf("nothing to claim after %v starts", starts)
		}
		var done []driver.CompletionRequest
		var started []driver.FlowKey
		for _, c := range claimed {
			if !c.KeyShared {
				t.Fatalf("claimed task %d of key %q without its fair share mark", c.ID, c.ConcurrencyKey)
			}
			starts[c.ConcurrencyKey]++
			if starts["heavy"]+starts["light"] == warmup {
				first = maps.Clone(starts)
			}
			started = append(started, driver.FlowKey{Type: "f", Key: c.ConcurrencyKey})
			done = append(done, driver.CompletionRequest{Ref: driver.LeaseRef{ID: c.ID, Attempt: c.Attempt}})
		}
		_, err = b.Driver.CompleteMany(bg, "w", done)
		dbtest.Must(t, "complete", err)
		_, err = bookkeeping.ReleaseKeys(bg, tb, started)
		dbtest.Must(t, "release", err)
	}
	h, l := starts["heavy"]-first["heavy"], starts["light"]-first["light"]
	if ratio := float64(h) / float64(max(l, 1)); ratio < 1.8 || ratio > 2.2 {
		t.Errorf("after %d starts, heavy (weight 2) started %d and light (weight 1) %d: a ratio of %.2f, want 2", warmup, h, l, ratio)
	}
	t.Logf("after %d starts, heavy (weight 2) started %d and light (weight 1) %d", warmup, h, l)
}
