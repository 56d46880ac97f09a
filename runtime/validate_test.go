package runtime

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
)

// Every request a column cannot hold as given is refused with a typed
// error naming the rule, the same on every engine, before it reaches the
// driver; the bounds themselves are stored as given.
func TestEnqueueRejectsBadInput(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *testBundle) {
		big := int(int64(1) << 40)
		bad := map[string]struct {
			typ  string
			opts []EnqueueOption
			want string
		}{
			"priority 1<<31":       {"a", []EnqueueOption{WithPriority(math.MaxInt32 + 1)}, "priority must be in"},
			"priority 1<<32+7":     {"a", []EnqueueOption{WithPriority(1<<32 + 7)}, "priority must be in"},
			"priority 1<<40":       {"a", []EnqueueOption{WithPriority(big)}, "priority must be in"},
			"priority below int32": {"a", []EnqueueOption{WithPriority(math.MinInt32 - 1)}, "priority must be in"},
			"max attempts 1<<40":   {"a", []EnqueueOption{WithMaxAttempts(big)}, "max attempts must be in"},
			"owner not UTF-8":      {"a", []EnqueueOption{WithOwner("t\xff")}, "owner id"},
			"key not UTF-8":        {"a", []EnqueueOption{WithIdempotencyKey("k\xc3")}, "idempotency key"},
			"type not ASCII":       {"tâche", nil, "printable ASCII"},
			"type with a space":    {"a b", nil, "printable ASCII"},
			"run-at in year 10000": {"a", []EnqueueOption{WithRunAt(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC))}, "run-at"},
			"delay of 200 years":   {"a", []EnqueueOption{WithDelay(200 * 365 * 24 * time.Hour)}, "delay must be in"},
			"unique with no key":   {"a", []EnqueueOption{WithUniqueKey("")}, "is unique, so its key must not be empty"},
		}
		for name, c := range bad {
			_, err := b.client.Enqueue(bg, c.typ, []byte(`{}`), c.opts...)
			if !errors.Is(err, ErrInvalidTask) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: err = %v, want ErrInvalidTask saying %q", name, err, c.want)
			}
		}
		if n := b.db.Int(t, "SELECT COUNT(*) FROM leasegen_tasks"); n != 0 {
			t.Errorf("%d rows stored by refused requests", n)
		}

		for _, p := range []int{math.MaxInt32, math.MinInt32} {
			id := b.enqueue(t, "a", WithPriority(p))
			info, err := b.client.Get(bg, id)
			dbtest.Must(t, "get", err)
			if info.Priority != p {
				t.Errorf("priority %d stored as %d", p, info.Priority)
			}
		}
		// A nil payload is an empty one, alone and in a batch.
		_, err := b.client.Enqueue(bg, "a", nil)
		dbtest.Must(t, "nil payload", err)
		_, err = b.client.EnqueueMany(bg, []Request{{Type: "a"}, {Type: "a", Payload: nil}})
		dbtest.Must(t, "nil payloads in a batch", err)
	})
}

// A payload within the client's limit that the server's max_allowed_packet
// cannot take once escaped (quotes double under interpolateParams) is
// refused with the server's limit named, and the connection it would have
// broken serves the next enqueue.
func TestEnqueuePayloadWithinServerLimit(t *testing.T) {
	forEachEngine(t, func(t *testing.T, b *testBundle) {
		client, err := NewClient(b.engine, ClientConfig{MaxPayloadBytes: maxPayloadCeiling})
		dbtest.Must(t, "client", err)
		quotes := bytes.Repeat([]byte{'\''}, maxPayloadCeiling)
		fits := true // SQLite takes 1 GB a value
		if b.kind == kindMySQL {
			fits = len(quotes) <= escapedLimit(int64(b.db.Int(t, "SELECT @@max_allowed_packet")))
		}
		_, err = client.Enqueue(bg, "a", quotes)
		switch {
		case fits:
			dbtest.Must(t, "8 MiB of quotes within the server's limit", err)
		case !errors.Is(err, ErrPayloadTooLarge) || !strings.Contains(err.Error(), "max_allowed_packet"):
			t.Errorf("8 MiB of quotes: err = %v, want ErrPayloadTooLarge naming max_allowed_packet", err)
		}
		_, err = client.Enqueue(bg, "a", []byte(`{}`))
		dbtest.Must(t, "the next enqueue", err)
	})
}
