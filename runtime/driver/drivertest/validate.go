package drivertest

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime"
)

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
	if n := b.DB.Int(t, "SELECT COUNT(*) FROM leasegen_tasks"); n != 0 {
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
	// A nil payload is an empty one, alone and in a batch.
	_, err := b.Client.Enqueue(bg, "a", nil)
	dbtest.Must(t, "nil payload", err)
	_, err = b.Client.EnqueueMany(bg, []runtime.Request{{Type: "a"}, {Type: "a", Payload: nil}})
	dbtest.Must(t, "nil payloads in a batch", err)
}
