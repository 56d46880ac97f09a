package systemtest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"math"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime"
)

func testEnqueueStoresOptions(t *testing.T, b *Bundle) {
	runAt := time.Date(2031, 5, 6, 7, 8, 9, 123e6, time.FixedZone("x", 3600))
	id, err := b.Client.Enqueue(bg, "report", []byte(`{"a":1}`),
		runtime.WithPriority(7), runtime.WithMaxAttempts(9), runtime.WithOwner("tenant-1"), runtime.WithIdempotencyKey("k1"), runtime.WithRunAt(runAt))
	dbtest.Must(t, "enqueue", err)
	info, err := b.Client.Get(bg, id)
	dbtest.Must(t, "get", err)
	want := runtime.TaskInfo{ID: id, Type: "report", Status: runtime.StatusQueued, Payload: []byte(`{"a":1}`), Priority: 7,
		AvailableAt: runAt.UTC(), MaxAttempts: 9, OwnerID: "tenant-1", IdempotencyKey: "k1"}
	ignore := cmp.FilterPath(func(p cmp.Path) bool {
		name := p.String()
		return name == "CreatedAt" || name == "UpdatedAt"
	}, cmp.Ignore())
	if diff := cmp.Diff(want, info, ignore); diff != "" {
		t.Errorf("stored task (-want +got):\n%s", diff)
	}

	delayed := b.Enqueue(t, "report", runtime.WithDelay(90*time.Second))
	wait := b.MillisUntil(t, "available_at", delayed) / 1000
	if wait < 85 || wait > 90 {
		t.Errorf("delayed task available in %ds, want about 90", wait)
	}
	if info, _ := b.Client.Get(bg, b.Enqueue(t, "report")); info.MaxAttempts != 5 {
		t.Errorf("default max attempts = %d, want 5", info.MaxAttempts)
	}
}

// The batch insert stores each row's own options, whichever statement
// shape an engine picks for it: rows without keys share multi-row
// statements, and a keyed row among them takes the keyed path.
func testEnqueueManyStoresOptions(t *testing.T, b *Bundle) {
	runAt := time.Date(2031, 5, 6, 7, 8, 9, 123e6, time.UTC)
	opts := [][]runtime.EnqueueOption{
		{},
		{runtime.WithPriority(-3), runtime.WithMaxAttempts(2), runtime.WithOwner(`o'wner\"1`), runtime.WithRunAt(runAt)},
		{runtime.WithDelay(90 * time.Second), runtime.WithMetadata(map[string]string{"k": "v'\\"})},
		{runtime.WithPriority(4), runtime.WithOwner("tenant-2"), runtime.WithIdempotencyKey("batch-key")},
	}
	want := []runtime.TaskInfo{
		{Type: "many", MaxAttempts: 5},
		{Type: "many", Priority: -3, MaxAttempts: 2, OwnerID: `o'wner\"1`, AvailableAt: runAt},
		{Type: "many", MaxAttempts: 5, Metadata: map[string]string{"k": "v'\\"}},
		{Type: "many", Priority: 4, MaxAttempts: 5, OwnerID: "tenant-2", IdempotencyKey: "batch-key"},
	}
	for _, keyed := range []bool{false, true} {
		n := len(opts) - 1
		if keyed {
			n = len(opts)
		}
		reqs := make([]runtime.Request, n)
		for i := range reqs {
			reqs[i] = runtime.Request{Type: "many", Payload: fmt.Appendf(nil, `{"row":%d}`, i), Options: opts[i]}
		}
		ids, err := b.Client.EnqueueMany(bg, reqs)
		dbtest.Must(t, "enqueue many", err)
		for i, id := range ids {
			info, err := b.Client.Get(bg, id)
			dbtest.Must(t, "get", err)
			w := want[i]
			w.ID, w.Status, w.Payload = id, runtime.StatusQueued, reqs[i].Payload
			ignore := cmp.FilterPath(func(p cmp.Path) bool {
				name := p.String()
				return name == "CreatedAt" || name == "UpdatedAt" || (name == "AvailableAt" && w.AvailableAt.IsZero())
			}, cmp.Ignore())
			if diff := cmp.Diff(w, info, ignore); diff != "" {
				t.Errorf("keyed batch %v, row %d (-want +got):\n%s", keyed, i, diff)
			}
		}
		if wait := b.MillisUntil(t, "available_at", ids[2]) / 1000; wait < 85 || wait > 90 {
			t.Errorf("keyed batch %v: delayed row available in %ds, want about 90", keyed, wait)
		}
	}
}

// Batches enqueued at once, beside one-at-a-time enqueues, each get the
// ids of their own rows, in order: the ids an engine hands a statement's
// rows need not be consecutive (MySQL 8's innodb_autoinc_lock_mode 2).
func testEnqueueManyConcurrentIDs(t *testing.T, b *Bundle) {
	const goroutines, batches, rows = 4, 3, 150
	want := map[runtime.TaskID]string{} // id -> payload
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for n := range batches {
				reqs := make([]runtime.Request, rows)
				for i := range reqs {
					reqs[i] = runtime.Request{Type: "race-batch", Payload: fmt.Appendf(nil, `{"g":%d,"b":%d,"i":%d}`, g, n, i)}
				}
				ids, err := b.Client.EnqueueMany(bg, reqs)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for i, id := range ids {
					want[id] = string(reqs[i].Payload)
				}
				mu.Unlock()
			}
		})
	}
	wg.Go(func() {
		for range 60 {
			if _, err := b.Client.Enqueue(bg, "race-one", []byte(`{}`)); err != nil {
				t.Error(err)
				return
			}
		}
	})
	wg.Wait()
	if len(want) != goroutines*batches*rows {
		t.Fatalf("%d distinct ids for %d rows", len(want), goroutines*batches*rows)
	}
	got := map[runtime.TaskID]string{}
	for _, info := range b.Tasks(t, runtime.Filter{Type: "race-batch"}) {
		got[info.ID] = string(info.Payload)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("returned ids against stored rows (-returned +stored):\n%s", diff)
	}
}

func testEnqueueIdempotencyKey(t *testing.T, b *Bundle) {
	first := b.Enqueue(t, "a", runtime.WithIdempotencyKey("same"))
	if again := b.Enqueue(t, "a", runtime.WithIdempotencyKey("same")); again != first {
		t.Errorf("same key: id %d, want existing %d", again, first)
	}
	if other := b.Enqueue(t, "b", runtime.WithIdempotencyKey("same")); other == first {
		t.Error("the key is per task type, but another type got the same task")
	}

	// Concurrent enqueues of one key store one task.
	var wg sync.WaitGroup
	got := make([]runtime.TaskID, 16)
	for i := range got {
		wg.Go(func() {
			id, err := b.Client.Enqueue(bg, "a", []byte(`{}`), runtime.WithIdempotencyKey("race"))
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
	if n := len(b.Tasks(t, runtime.Filter{Key: "race"})); n != 1 {
		t.Errorf("%d rows for one key", n)
	}
}

func testEnqueueTx(t *testing.T, b *Bundle) {
	tx, err := b.DB.DB.Begin()
	dbtest.Must(t, "begin", err)
	rolledBack, err := b.Client.EnqueueTx(bg, tx, "a", []byte(`{}`))
	dbtest.Must(t, "enqueue tx", err)
	dbtest.Must(t, "rollback", tx.Rollback())
	if _, err := b.Client.Get(bg, rolledBack); !errors.Is(err, runtime.ErrTaskNotFound) {
		t.Errorf("task of a rolled-back transaction: err = %v, want ErrTaskNotFound", err)
	}

	tx, err = b.DB.DB.Begin()
	dbtest.Must(t, "begin", err)
	ids, err := b.Client.EnqueueManyTx(bg, tx, []runtime.Request{{Type: "a"}, {Type: "b"}})
	dbtest.Must(t, "enqueue many tx", err)
	dbtest.Must(t, "commit", tx.Commit())
	for _, id := range ids {
		if _, err := b.Client.Get(bg, id); err != nil {
			t.Errorf("committed task %d: %v", id, err)
		}
	}
}

func testEnqueueRejectsOversizedInput(t *testing.T, b *Bundle) {
	small, err := runtime.NewClient(b.Engine, runtime.ClientConfig{MaxPayloadBytes: 10})
	dbtest.Must(t, "client", err)
	long := strings.Repeat("x", 256)
	cases := []struct {
		name    string
		typ     string
		payload string
		opts    []runtime.EnqueueOption
		is      error
		message string
	}{
		{"payload", "a", `{"too":"long"}`, nil, runtime.ErrPayloadTooLarge, "payload is 14 bytes, the limit is 10"},
		{"type", strings.Repeat("t", 129), "", nil, runtime.ErrInvalidTask, "the limit is 128"},
		{"empty type", "", "", nil, runtime.ErrInvalidTask, "empty task type"},
		{"owner", "a", "", []runtime.EnqueueOption{runtime.WithOwner(long)}, runtime.ErrInvalidTask, "owner id is 256 bytes, the limit is 255"},
		{"key", "a", "", []runtime.EnqueueOption{runtime.WithIdempotencyKey(long)}, runtime.ErrInvalidTask, "idempotency key is 256 bytes, the limit is 255"},
		{"attempts", "a", "", []runtime.EnqueueOption{runtime.WithMaxAttempts(0)}, runtime.ErrInvalidTask, "max attempts must be in 1.."},
		{"delay", "a", "", []runtime.EnqueueOption{runtime.WithDelay(-time.Second)}, runtime.ErrInvalidTask, "delay must be in 0.."},
		{"rate starts", "a", "", []runtime.EnqueueOption{runtime.WithKeyRate("k", 0, time.Second)}, runtime.ErrInvalidTask, "limit must be in 1..10000"},
		{"rate window", "a", "", []runtime.EnqueueOption{runtime.WithKeyRate("k", 5, 1500*time.Microsecond)}, runtime.ErrInvalidTask, "whole number of milliseconds"},
		{"rate key", "a", "", []runtime.EnqueueOption{runtime.WithKeyRate("k", 5, time.Second), runtime.WithConcurrencyKey("j", 1)}, runtime.ErrInvalidTask, `rate key "k": one task has one key`},
		{"empty rate key", "a", "", []runtime.EnqueueOption{runtime.WithKeyRate("", 5, time.Second)}, runtime.ErrInvalidTask, "concurrency key is empty"},
	}
	for _, c := range cases {
		_, err := small.Enqueue(bg, c.typ, []byte(c.payload), c.opts...)
		if !errors.Is(err, c.is) || !strings.Contains(fmt.Sprint(err), c.message) {
			t.Errorf("%s: err = %v, want %v containing %q", c.name, err, c.is, c.message)
		}
	}
	if n := b.Total(t); n != 0 {
		t.Errorf("%d rows stored by rejected enqueues", n)
	}
	if _, err := runtime.NewClient(b.Engine, runtime.ClientConfig{MaxPayloadBytes: 9 << 20}); !errors.Is(err, runtime.ErrInvalidConfig) {
		t.Errorf("payload bound above 8 MiB: err = %v", err)
	}
}

func testGetListCancel(t *testing.T, b *Bundle) {
	if _, err := b.Client.Get(bg, 12345); !errors.Is(err, runtime.ErrTaskNotFound) {
		t.Errorf("Get(unknown) err = %v", err)
	}
	t1 := b.Enqueue(t, "a", runtime.WithOwner("alice"))
	t2 := b.Enqueue(t, "b", runtime.WithOwner("alice"))
	b.Enqueue(t, "a", runtime.WithOwner("bob"))
	dbtest.Must(t, "cancel", b.Client.Cancel(bg, t1))

	list := func(statuses ...runtime.Status) []runtime.TaskID {
		infos, err := b.Client.ListByOwner(bg, "alice", 10, statuses...)
		dbtest.Must(t, "list", err)
		out := []runtime.TaskID{}
		for _, i := range infos {
			out = append(out, i.ID)
		}
		return out
	}
	if diff := cmp.Diff([]runtime.TaskID{t2, t1}, list()); diff != "" {
		t.Errorf("all of alice's tasks, newest first (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]runtime.TaskID{t1}, list(runtime.StatusCancelled)); diff != "" {
		t.Errorf("alice's cancelled tasks (-want +got):\n%s", diff)
	}
	b.Enqueue(t, "a") // no owner: partial owner indexes hold no entry for it
	if _, err := b.Client.ListByOwner(bg, "", 10); !errors.Is(err, runtime.ErrInvalidTask) {
		t.Errorf("ListByOwner without an owner err = %v, want ErrInvalidTask", err)
	}
	if err := b.Client.Cancel(bg, t1); !errors.Is(err, runtime.ErrTaskFinished) {
		t.Errorf("second cancel err = %v, want ErrTaskFinished", err)
	}
	if err := b.Client.Cancel(bg, 999999); !errors.Is(err, runtime.ErrTaskNotFound) {
		t.Errorf("cancel unknown err = %v", err)
	}
}

// Every request a column cannot hold as given is refused with a typed
// error naming the rule, the same on every engine, before it reaches the
// driver; the bounds themselves are stored as given.
func testEnqueueRejectsBadInput(t *testing.T, b *Bundle) {
	big := int(int64(1) << 40)
	bad := map[string]struct {
		typ  string
		opts []runtime.EnqueueOption
		want string
	}{
		"priority 1<<31":       {"a", []runtime.EnqueueOption{runtime.WithPriority(math.MaxInt32 + 1)}, "priority must be in"},
		"priority 1<<32+7":     {"a", []runtime.EnqueueOption{runtime.WithPriority(1<<32 + 7)}, "priority must be in"},
		"priority 1<<40":       {"a", []runtime.EnqueueOption{runtime.WithPriority(big)}, "priority must be in"},
		"priority below int32": {"a", []runtime.EnqueueOption{runtime.WithPriority(math.MinInt32 - 1)}, "priority must be in"},
		"max attempts 1<<40":   {"a", []runtime.EnqueueOption{runtime.WithMaxAttempts(big)}, "max attempts must be in"},
		"owner not UTF-8":      {"a", []runtime.EnqueueOption{runtime.WithOwner("t\xff")}, "owner id"},
		"key not UTF-8":        {"a", []runtime.EnqueueOption{runtime.WithIdempotencyKey("k\xc3")}, "idempotency key"},
		"owner with NUL":       {"a", []runtime.EnqueueOption{runtime.WithOwner("t\x00")}, "NUL byte"},
		"key with NUL":         {"a", []runtime.EnqueueOption{runtime.WithIdempotencyKey("k\x00")}, "NUL byte"},
		"metadata with NUL":    {"a", []runtime.EnqueueOption{runtime.WithMetadata(map[string]string{"k": "v\x00"})}, "without NUL bytes"},
		"type not ASCII":       {"tâche", nil, "printable ASCII"},
		"type with a space":    {"a b", nil, "printable ASCII"},
		"run-at in year 10000": {"a", []runtime.EnqueueOption{runtime.WithRunAt(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC))}, "run-at"},
		"delay of 200 years":   {"a", []runtime.EnqueueOption{runtime.WithDelay(200 * 365 * 24 * time.Hour)}, "delay must be in"},
		"unique with no key":   {"a", []runtime.EnqueueOption{runtime.WithUniqueKey("")}, "is unique, so its key must not be empty"},
		"metadata empty key":   {"a", []runtime.EnqueueOption{runtime.WithMetadata(map[string]string{"": "v"})}, "metadata: keys must be non-empty"},
		"metadata not UTF-8":   {"a", []runtime.EnqueueOption{runtime.WithMetadata(map[string]string{"k": "v\xff"})}, "valid UTF-8"},
		"metadata of 17 KiB":   {"a", []runtime.EnqueueOption{runtime.WithMetadata(map[string]string{"k": strings.Repeat("v", 17<<10)})}, "metadata is 17"},
	}
	for name, c := range bad {
		_, err := b.Client.Enqueue(bg, c.typ, []byte(`{}`), c.opts...)
		if !errors.Is(err, runtime.ErrInvalidTask) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want ErrInvalidTask saying %q", name, err, c.want)
		}
	}
	for _, payload := range []string{"not json", "", `{"a":1`, "\xff"} {
		_, err := b.Client.Enqueue(bg, "a", []byte(payload))
		if !errors.Is(err, runtime.ErrInvalidTask) || !strings.Contains(err.Error(), "payload is not JSON") {
			t.Errorf("payload %q: err = %v, want ErrInvalidTask saying it is not JSON", payload, err)
		}
	}
	if n := b.Total(t); n != 0 {
		t.Errorf("%d rows stored by refused requests", n)
	}

	for _, p := range []int{math.MaxInt32, math.MinInt32} {
		id := b.Enqueue(t, "a", runtime.WithPriority(p))
		info, err := b.Client.Get(bg, id)
		dbtest.Must(t, "get", err)
		if info.Priority != p {
			t.Errorf("priority %d stored as %d", p, info.Priority)
		}
	}
	// A nil payload is {}, alone and in a batch.
	none, err := b.Client.Enqueue(bg, "a", nil)
	dbtest.Must(t, "nil payload", err)
	ids, err := b.Client.EnqueueMany(bg, []runtime.Request{{Type: "a"}, {Type: "a", Payload: nil}})
	dbtest.Must(t, "nil payloads in a batch", err)
	for _, id := range append(ids, none) {
		if info, err := b.Client.Get(bg, id); err != nil || string(info.Payload) != "{}" {
			t.Errorf("a nil payload is stored as %q (%v), want {}", info.Payload, err)
		}
	}
}
