package drivertest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/internal/testwait"
	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// InTx's promise: a transaction that takes the registry lock after
// another took it waits until that one ends, then sees its writes; a
// transaction that fails rolls back all of its writes.
func testTablesInTxSerializesRegistry(t *testing.T, b *Bundle) {
	first, second := b.Driver.Tables(), b.H.New(b.DB.Open(t)).Tables()
	locked, release := make(chan struct{}), make(chan struct{})
	firstDone := make(chan error, 1)
	go func() {
		firstDone <- first.InTx(bg, func(tx driver.Tables) error {
			if err := tx.WorkerLockRegistry(bg); err != nil {
				return err
			}
			if _, err := tx.WorkerInsert(bg, driver.WorkerRegistration{ID: "first", Host: "h", TTL: time.Hour}); err != nil {
				return err
			}
			close(locked)
			<-release
			return nil
		})
	}()
	<-locked
	var seen []string
	secondDone := make(chan error, 1)
	go func() {
		secondDone <- second.InTx(bg, func(tx driver.Tables) error {
			if err := tx.WorkerLockRegistry(bg); err != nil {
				return err
			}
			live, err := tx.WorkerListLive(bg)
			seen = seen[:0]
			for _, w := range live {
				seen = append(seen, w.ID)
			}
			return err
		})
	}()
	// The second transaction must not end while the first holds the lock;
	// the wait gives it the chance to, were it not serialized.
	select {
	case err := <-secondDone:
		t.Fatalf("the second transaction ended (%v, saw %v) while the first held the registry lock", err, seen)
	case <-time.After(300 * time.Millisecond):
	}
	close(release)
	dbtest.Must(t, "first transaction", <-firstDone)
	dbtest.Must(t, "second transaction", <-secondDone)
	if !slices.Equal(seen, []string{"first"}) {
		t.Errorf("the second transaction saw live workers %v, want the first's row", seen)
	}

	failure := errors.New("rolled back")
	err := first.InTx(bg, func(tx driver.Tables) error {
		if _, err := tx.WorkerInsert(bg, driver.WorkerRegistration{ID: "undone", Host: "h", TTL: time.Hour}); err != nil {
			return err
		}
		return failure
	})
	if !errors.Is(err, failure) {
		t.Errorf("InTx returned %v, want fn's error", err)
	}
	live, err := first.WorkerListLive(bg)
	dbtest.Must(t, "list live workers", err)
	if len(live) != 1 || live[0].ID != "first" {
		t.Errorf("after a failed transaction the live workers are %+v, want only the first", live)
	}
}

// Each query of the worker registry, paused types and attempts does what
// its doc says, on the pool.
func testTablesRegistryPausedAttempts(t *testing.T, b *Bundle) {
	tb := b.Driver.Tables()
	reg := driver.WorkerRegistration{ID: "w", Host: "h", PID: 7, MaxConcurrency: 4, GlobalLimit: 2,
		TaskLimits: map[string]int{"a": 1}, Schedules: []string{"s"}, TTL: time.Hour}
	for _, c := range []struct {
		name string
		do   func() (bool, error)
		want bool
	}{
		{"insert a new worker", func() (bool, error) { return tb.WorkerInsert(bg, reg) }, true},
		{"insert it again", func() (bool, error) { return tb.WorkerInsert(bg, reg) }, false},
		{"renew it", func() (bool, error) { return tb.WorkerRenew(bg, "w", time.Hour) }, true},
		{"renew an unknown worker", func() (bool, error) { return tb.WorkerRenew(bg, "nobody", time.Hour) }, false},
		{"pause a type", func() (bool, error) { return tb.PausedTypeInsert(bg, "a") }, true},
		{"pause it again", func() (bool, error) { return tb.PausedTypeInsert(bg, "a") }, false},
		{"resume an unpaused type", func() (bool, error) { return tb.PausedTypeDelete(bg, "b") }, false},
	} {
		got, err := c.do()
		dbtest.Must(t, c.name, err)
		if got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// Renewals a round trip apart mostly fall in one millisecond of the
	// database's clock and leave the expiry as it was: the row still exists.
	for i := range 20 {
		if renewed, err := tb.WorkerRenew(bg, "w", time.Hour); err != nil || !renewed {
			t.Fatalf("renewal %d of a quick run: %v, %v, want true", i+1, renewed, err)
		}
	}
	live, err := tb.WorkerListLive(bg)
	dbtest.Must(t, "list live workers", err)
	if len(live) != 1 || live[0].PID != 7 || live[0].MaxConcurrency != 4 || live[0].GlobalLimit != 2 ||
		!cmp.Equal(live[0].TaskLimits, reg.TaskLimits) || !slices.Equal(live[0].Schedules, reg.Schedules) || !live[0].AliveUntil.After(live[0].StartedAt) {
		t.Errorf("live workers %+v, want the registered row", live)
	}
	dbtest.Must(t, "renew to expire", errOf(tb.WorkerRenew(bg, "w", -time.Second)))
	dbtest.Must(t, "delete expired rows", tb.WorkerDeleteExpired(bg))
	if live, err := tb.WorkerListLive(bg); err != nil || len(live) != 0 {
		t.Errorf("after its row expired and was deleted the live workers are %+v, %v", live, err)
	}
	paused, err := tb.PausedTypeList(bg)
	dbtest.Must(t, "list paused types", err)
	if _, ok := paused["a"]; len(paused) != 1 || !ok {
		t.Errorf("paused types %v, want a", paused)
	}

	id := b.InsertOne(t, driver.NewTask{})
	now, err := tb.Now(bg)
	dbtest.Must(t, "now", err)
	for attempt := 1; attempt <= 3; attempt++ {
		rec := driver.AttemptRecord{TaskID: id, Attempt: attempt, Worker: "w", StartedAt: now, Outcome: leasetype.AttemptFailed,
			Error: "boom", Duration: 1500 * time.Microsecond}
		if attempt == 3 {
			rec.FinishedAt = now.Add(time.Minute) // given: stored as given
		}
		dbtest.Must(t, "insert an attempt", tb.AttemptInsert(bg, rec))
		dbtest.Must(t, "insert it again", tb.AttemptInsert(bg, rec))
	}
	dbtest.Must(t, "trim", tb.AttemptTrim(bg, id, 2))
	// A record of an old attempt that lands after the trim goes at its own.
	late := driver.AttemptRecord{TaskID: id, Attempt: 1, Worker: "w", StartedAt: now, Outcome: leasetype.AttemptFailed}
	dbtest.Must(t, "insert an old attempt late", tb.AttemptInsert(bg, late))
	dbtest.Must(t, "trim after it", tb.AttemptTrim(bg, id, 2))
	attempts, err := tb.AttemptList(bg, id)
	dbtest.Must(t, "list attempts", err)
	// A millisecond column truncates (MariaDB) or rounds (MySQL) the instant.
	if len(attempts) != 2 || attempts[0].Attempt != 2 || attempts[1].Attempt != 3 || attempts[0].Error != "boom" ||
		attempts[0].Duration != 1500*time.Microsecond || attempts[0].StartedAt.Sub(now).Abs() > time.Millisecond ||
		attempts[0].FinishedAt.Sub(now).Abs() > time.Minute/2 || attempts[1].FinishedAt.Sub(now.Add(time.Minute)).Abs() > time.Millisecond {
		t.Errorf("attempts after a trim to the latest 2 (the third finished a minute after the others): %+v", attempts)
	}
	if orphans, err := tb.AttemptOrphans(bg, 10); err != nil || len(orphans) != 0 {
		t.Errorf("orphans while the task exists: %v, %v", orphans, err)
	}
	if n, err := tb.TaskPurge(bg, 0, 10); err != nil || n != 0 {
		t.Errorf("purging a queued task deleted %d, %v", n, err)
	}
	applied, err := tb.MigrationList(bg)
	dbtest.Must(t, "list migrations", err)
	if len(applied) == 0 {
		t.Error("no applied migration listed on a migrated database")
	}
}

// The stored count's queries: one worker takes the turn to count, the
// count replaces the last, and the turn says when it was read and when the
// next is due.
func testTablesCounts(t *testing.T, b *Bundle) {
	tb := b.Driver.Tables()
	turn, err := tb.CountTurnGet(bg)
	dbtest.Must(t, "read the turn", err)
	if !turn.CountedAt.IsZero() {
		t.Errorf("a new database's turn says it counted at %v", turn.CountedAt)
	}
	if mine, err := tb.CountTurnTake(bg, time.Hour); err != nil || !mine {
		t.Fatalf("the first take of a due turn: %v, %v, want true", mine, err)
	}
	if mine, err := tb.CountTurnTake(bg, time.Hour); err != nil || mine {
		t.Errorf("a take of a held turn: %v, %v, want false", mine, err)
	}
	now, err := tb.Now(bg)
	dbtest.Must(t, "now", err)
	for _, counts := range [][]leasetype.TypeStatusCount{
		{{Type: "a", Status: leasetype.StatusQueued, Tasks: 3}, {Type: "b", Status: leasetype.StatusFailed, Tasks: 1}},
		{{Type: "a", Status: leasetype.StatusSuccess, Tasks: 5}},
	} {
		err := tb.InTx(bg, func(tx driver.Tables) error {
			if err := tx.CountsDelete(bg); err != nil {
				return err
			}
			for _, c := range counts {
				if err := tx.CountsInsert(bg, c); err != nil {
					return err
				}
			}
			return tx.CountTurnDone(bg, now, 1500*time.Microsecond, -time.Second)
		})
		dbtest.Must(t, "store a count", err)
		stored, err := tb.CountsList(bg)
		dbtest.Must(t, "list the count", err)
		if !cmp.Equal(stored, counts) {
			t.Errorf("stored count %+v, want %+v", stored, counts)
		}
	}
	turn, err = tb.CountTurnGet(bg)
	dbtest.Must(t, "read the turn", err)
	if turn.CountedAt.Sub(now).Abs() > time.Millisecond || turn.Took != 1500*time.Microsecond || !turn.NextAt.Before(now.Add(time.Second)) {
		t.Errorf("turn %+v after a count read at %v that took 1.5 ms, due again a second ago", turn, now)
	}
	if mine, err := tb.CountTurnTake(bg, time.Hour); err != nil || !mine {
		t.Errorf("a take of a turn due again: %v, %v, want true", mine, err)
	}
}

// errOf drops a result, keeping the error.
func errOf[T any](_ T, err error) error { return err }

// TablesIn reads in the caller's transaction: it sees the task the
// transaction inserted and has not committed, which the pool does not.
func testTablesInSeesTheTransaction(t *testing.T, b *Bundle) {
	tx, err := b.DB.BeginTx(bg, nil)
	dbtest.Must(t, "begin", err)
	defer tx.Rollback() //nolint:errcheck // rolled back on purpose
	ids, err := b.Driver.Insert(bg, tx, []driver.NewTask{{Type: "a", Payload: []byte(`{}`), MaxAttempts: 1}})
	dbtest.Must(t, "insert in the transaction", err)
	in, err := b.Driver.TablesIn(tx).TaskList(bg, leasetype.Filter{Limit: 10})
	dbtest.Must(t, "list in the transaction", err)
	if len(in) != 1 || in[0].ID != ids[0] {
		t.Errorf("the transaction lists %+v, want its task %d", in, ids[0])
	}
	out, err := b.Driver.Tables().TaskList(bg, leasetype.Filter{Limit: 10})
	dbtest.Must(t, "list on the pool", err)
	if len(out) != 0 {
		t.Errorf("the pool lists %+v before the commit, want nothing", out)
	}
}

// TaskCountPurgeable counts, up to its cap, the finished tasks older than
// the age that TaskPurge then deletes, and never an unfinished one.
func testTablesPurgeableCount(t *testing.T, b *Bundle) {
	tb := b.Driver.Tables()
	b.Insert(t, driver.NewTask{}, driver.NewTask{}, driver.NewTask{}, driver.NewTask{})
	claimed := b.Claim(t, "w", 3, "a")
	if len(claimed) != 3 {
		t.Fatalf("claimed %d, want 3", len(claimed))
	}
	for _, c := range claimed {
		ok, err := b.Driver.Complete(bg, b.DB.DB, "w", driver.LeaseRef{ID: c.ID, Attempt: c.Attempt}, "")
		if err != nil || !ok {
			t.Fatalf("complete %d: %v, %v", c.ID, ok, err)
		}
	}
	count := func(age time.Duration, limit int) int {
		n, err := tb.TaskCountPurgeable(bg, age, limit)
		dbtest.Must(t, "count purgeable", err)
		return n
	}
	if n := count(time.Hour, 10); n != 0 {
		t.Errorf("%d tasks finished more than an hour ago, want 0", n)
	}
	testwait.Until(t, func() bool { return count(0, 10) == 3 }, func() string { // the database's clock passes the finish
		return fmt.Sprintf("%d purgeable tasks, want the 3 finished", count(0, 10))
	})
	if n := count(0, 2); n != 2 {
		t.Errorf("counted %d up to a cap of 2", n)
	}
	if n, err := tb.TaskPurge(bg, 0, 10); err != nil || n != 3 {
		t.Errorf("purge deleted %d, %v; want the 3 counted", n, err)
	}
	if n := count(0, 10); n != 0 {
		t.Errorf("%d purgeable after the purge", n)
	}
}

// The keys that idempotent executions recorded are found by key, of any
// type, and by task.
func testTablesWorkKeys(t *testing.T, b *Bundle) {
	ids := b.Insert(t, driver.NewTask{}, driver.NewTask{Type: "b"}, driver.NewTask{})
	record := func(typ string, id leasetype.TaskID) {
		tx, err := b.DB.BeginTx(bg, nil)
		dbtest.Must(t, "begin", err)
		_, err = b.Driver.RecordKey(bg, tx, typ, "k-1", id)
		dbtest.Must(t, "record the key", err)
		dbtest.Must(t, "commit", tx.Commit())
	}
	record("a", ids[0])
	record("b", ids[1])
	tb := b.Driver.Tables()
	got, err := tb.IdempotencyKeyTasks(bg, "k-1", 10)
	if err != nil || !slices.Equal(got, []leasetype.TaskID{ids[1], ids[0]}) {
		t.Errorf("tasks of key k-1 = %v, %v; want %v, newest first", got, err, []leasetype.TaskID{ids[1], ids[0]})
	}
	if got, err := tb.IdempotencyKeyTasks(bg, "k-1", 1); err != nil || len(got) != 1 {
		t.Errorf("tasks of key k-1 up to 1 = %v, %v", got, err)
	}
	if key, err := tb.IdempotencyKeyOfTask(bg, ids[0]); err != nil || key != "k-1" {
		t.Errorf("key of task %d = %q, %v; want k-1", ids[0], key, err)
	}
	if key, err := tb.IdempotencyKeyOfTask(bg, ids[2]); err != nil || key != "" {
		t.Errorf("key of a task that recorded none = %q, %v", key, err)
	}
}
