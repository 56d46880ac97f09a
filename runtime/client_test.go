package runtime

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/leasegen/leasegen/internal/dbtest"
)

func TestEnqueueStoresOptions(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *testBundle) {
		runAt := time.Date(2031, 5, 6, 7, 8, 9, 123e6, time.FixedZone("x", 3600))
		id, err := b.client.Enqueue(bg, "report", []byte(`{"a":1}`),
			WithPriority(7), WithMaxAttempts(9), WithOwner("tenant-1"), WithIdempotencyKey("k1"), WithRunAt(runAt))
		dbtest.Must(t, "enqueue", err)
		info, err := b.client.Get(bg, id)
		dbtest.Must(t, "get", err)
		want := TaskInfo{ID: id, Type: "report", Status: StatusQueued, Payload: []byte(`{"a":1}`), Priority: 7,
			AvailableAt: runAt.UTC(), MaxAttempts: 9, OwnerID: "tenant-1", IdempotencyKey: "k1"}
		ignore := cmp.FilterPath(func(p cmp.Path) bool {
			name := p.String()
			return name == "CreatedAt" || name == "UpdatedAt"
		}, cmp.Ignore())
		if diff := cmp.Diff(want, info, ignore); diff != "" {
			t.Errorf("stored task (-want +got):\n%s", diff)
		}

		delayed := b.enqueue(t, "report", WithDelay(90*time.Second))
		wait := b.msUntil(t, "available_at", delayed) / 1000
		if wait < 85 || wait > 90 {
			t.Errorf("delayed task available in %ds, want about 90", wait)
		}
		if info, _ := b.client.Get(bg, b.enqueue(t, "report")); info.MaxAttempts != 5 {
			t.Errorf("default max attempts = %d, want 5", info.MaxAttempts)
		}
	})
}

func TestEnqueueIdempotencyKey(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *testBundle) {
		first := b.enqueue(t, "a", WithIdempotencyKey("same"))
		if again := b.enqueue(t, "a", WithIdempotencyKey("same")); again != first {
			t.Errorf("same key: id %d, want existing %d", again, first)
		}
		if other := b.enqueue(t, "b", WithIdempotencyKey("same")); other == first {
			t.Error("the key is per task type, but another type got the same task")
		}

		// Concurrent enqueues of one key store one task.
		var wg sync.WaitGroup
		got := make([]TaskID, 16)
		for i := range got {
			wg.Go(func() {
				id, err := b.client.Enqueue(bg, "a", []byte(`{}`), WithIdempotencyKey("race"))
				if err != nil {
					t.Error(err)
				}
				got[i] = id
			})
		}
		wg.Wait()
		for _, id := range got[1:] {
			if id != got[0] {
				t.Fatalf("concurrent enqueues returned ids %v", got)
			}
		}
		if n := b.db.Int(t, "SELECT COUNT(*) FROM leasegen_tasks WHERE idempotency_key = 'race'"); n != 1 {
			t.Errorf("%d rows for one key", n)
		}
	})
}

// Every batch path returns ids in request order, an existing key's id for a
// duplicate, and stores each payload with its own row.
func TestEnqueueManyPaths(t *testing.T) {
	t.Parallel()
	paths := map[string]func(*mysqlStore){
		"returning":   func(s *mysqlStore) { s.returning, s.consecutiveIDs = true, false },
		"consecutive": func(s *mysqlStore) { s.returning, s.consecutiveIDs = false, true },
		"each":        func(s *mysqlStore) { s.returning, s.consecutiveIDs = false, false },
	}
	for name, force := range paths {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			st := b.engine.store.(*mysqlStore)
			dbtest.Must(t, "check", st.Check(bg))
			// A path the server lacks must not be the store's choice:
			// RETURNING is MariaDB's, consecutive ids need lock mode 0 or 1.
			var version string
			var lockMode int
			dbtest.Must(t, "server", b.db.DB.QueryRow("SELECT VERSION(), @@innodb_autoinc_lock_mode").Scan(&version, &lockMode))
			if supported := map[string]bool{"returning": isMariaDB(version), "consecutive": lockMode <= 1, "each": true}[name]; !supported {
				if (name == "returning" && st.returning) || (name == "consecutive" && st.consecutiveIDs) {
					t.Errorf("server %s (autoinc lock mode %d) lacks the %s path, but the store chose it", version, lockMode, name)
				}
				t.Logf("server %s (autoinc lock mode %d) has no %s path: checked that the store does not choose it", version, lockMode, name)
				return
			}
			force(st)
			existing := b.enqueue(t, "a", WithIdempotencyKey("old"))
			reqs := make([]Request, 2500) // three statements of at most 1,000 rows
			for i := range reqs {
				reqs[i] = Request{Type: "a", Payload: fmt.Appendf(nil, `{"n":%d}`, i)}
			}
			if name != "consecutive" {
				reqs[7].Options = []EnqueueOption{WithIdempotencyKey("old")}
				reqs[8].Options = []EnqueueOption{WithIdempotencyKey("new")}
				reqs[9].Options = []EnqueueOption{WithIdempotencyKey("new")}
			}
			got, err := b.client.EnqueueMany(bg, reqs)
			dbtest.Must(t, "enqueue many", err)
			if len(got) != len(reqs) {
				t.Fatalf("%d ids for %d requests", len(got), len(reqs))
			}
			if name != "consecutive" && (got[7] != existing || got[9] != got[8]) {
				t.Errorf("keyed rows: ids %d %d %d, want %d then a repeated new id", got[7], got[8], got[9], existing)
			}
			for i, id := range got {
				if name != "consecutive" && (i == 7 || i == 9) {
					continue
				}
				info, err := b.client.Get(bg, id)
				dbtest.Must(t, "get", err)
				if want := fmt.Sprintf(`{"n":%d}`, i); string(info.Payload) != want {
					t.Fatalf("id %d (request %d) has payload %s, want %s", id, i, info.Payload, want)
				}
			}
		})
	}
}

func TestEnqueueTx(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *testBundle) {
		tx, err := b.db.DB.Begin()
		dbtest.Must(t, "begin", err)
		rolledBack, err := b.client.EnqueueTx(bg, tx, "a", []byte(`{}`))
		dbtest.Must(t, "enqueue tx", err)
		dbtest.Must(t, "rollback", tx.Rollback())
		if _, err := b.client.Get(bg, rolledBack); !errors.Is(err, ErrTaskNotFound) {
			t.Errorf("task of a rolled-back transaction: err = %v, want ErrTaskNotFound", err)
		}

		tx, err = b.db.DB.Begin()
		dbtest.Must(t, "begin", err)
		ids, err := b.client.EnqueueManyTx(bg, tx, []Request{{Type: "a"}, {Type: "b"}})
		dbtest.Must(t, "enqueue many tx", err)
		dbtest.Must(t, "commit", tx.Commit())
		for _, id := range ids {
			if _, err := b.client.Get(bg, id); err != nil {
				t.Errorf("committed task %d: %v", id, err)
			}
		}
	})
}

func TestEnqueueRejectsOversizedInput(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *testBundle) {
		small, err := NewClient(b.engine, ClientConfig{MaxPayloadBytes: 10})
		dbtest.Must(t, "client", err)
		long := strings.Repeat("x", 256)
		cases := []struct {
			name    string
			typ     string
			payload string
			opts    []EnqueueOption
			is      error
			message string
		}{
			{"payload", "a", `{"too":"long"}`, nil, ErrPayloadTooLarge, "payload is 14 bytes, the limit is 10"},
			{"type", strings.Repeat("t", 129), "", nil, ErrInvalidTask, "the limit is 128"},
			{"empty type", "", "", nil, ErrInvalidTask, "empty task type"},
			{"owner", "a", "", []EnqueueOption{WithOwner(long)}, ErrInvalidTask, "owner id is 256 bytes, the limit is 255"},
			{"key", "a", "", []EnqueueOption{WithIdempotencyKey(long)}, ErrInvalidTask, "idempotency key is 256 bytes, the limit is 255"},
			{"attempts", "a", "", []EnqueueOption{WithMaxAttempts(0)}, ErrInvalidTask, "max attempts must be in 1.."},
			{"delay", "a", "", []EnqueueOption{WithDelay(-time.Second)}, ErrInvalidTask, "delay must be in 0.."},
		}
		for _, c := range cases {
			_, err := small.Enqueue(bg, c.typ, []byte(c.payload), c.opts...)
			if !errors.Is(err, c.is) || !strings.Contains(fmt.Sprint(err), c.message) {
				t.Errorf("%s: err = %v, want %v containing %q", c.name, err, c.is, c.message)
			}
		}
		if n := b.db.Int(t, "SELECT COUNT(*) FROM leasegen_tasks"); n != 0 {
			t.Errorf("%d rows stored by rejected enqueues", n)
		}
		if _, err := NewClient(b.engine, ClientConfig{MaxPayloadBytes: 9 << 20}); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("payload bound above 8 MiB: err = %v", err)
		}
	})
}

func TestGetListCancel(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *testBundle) {
		if _, err := b.client.Get(bg, 12345); !errors.Is(err, ErrTaskNotFound) {
			t.Errorf("Get(unknown) err = %v", err)
		}
		t1 := b.enqueue(t, "a", WithOwner("alice"))
		t2 := b.enqueue(t, "b", WithOwner("alice"))
		b.enqueue(t, "a", WithOwner("bob"))
		dbtest.Must(t, "cancel", b.client.Cancel(bg, t1))

		list := func(statuses ...Status) []TaskID {
			infos, err := b.client.ListByOwner(bg, "alice", 10, statuses...)
			dbtest.Must(t, "list", err)
			out := []TaskID{}
			for _, i := range infos {
				out = append(out, i.ID)
			}
			return out
		}
		if diff := cmp.Diff([]TaskID{t2, t1}, list()); diff != "" {
			t.Errorf("all of alice's tasks, newest first (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]TaskID{t1}, list(StatusCancelled)); diff != "" {
			t.Errorf("alice's cancelled tasks (-want +got):\n%s", diff)
		}
		if err := b.client.Cancel(bg, t1); !errors.Is(err, ErrTaskFinished) {
			t.Errorf("second cancel err = %v, want ErrTaskFinished", err)
		}
		if err := b.client.Cancel(bg, 999999); !errors.Is(err, ErrTaskNotFound) {
			t.Errorf("cancel unknown err = %v", err)
		}
	})
}
