package leasetest_test

import (
	"context"
	"errors"
	"fmt"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/leasetest"
	"github.com/leasegen/leasegen/runtime/leasetest/sqlitetest"
)

// TestMain fails on goroutines left running: WorkOne must stop its worker.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type notify struct {
	UserID  int64  `json:"user_id"`
	Message string `json:"message"`
}

func enqueue(t *testing.T, c *runtime.Client, typ string, p notify) runtime.TaskID {
	t.Helper()
	id, err := c.Enqueue(context.Background(), typ, fmt.Appendf(nil, `{"user_id":%d,"message":%q}`, p.UserID, p.Message))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// failure is a testing.TB that records a Fatalf instead of failing: an
// assertion that fails is run on its own goroutine, which Fatalf ends.
type failure struct {
	testing.TB
	mu  sync.Mutex
	msg string
}

func (f *failure) Helper() {}
func (f *failure) Fatalf(format string, args ...any) {
	f.mu.Lock()
	f.msg = fmt.Sprintf(format, args...)
	f.mu.Unlock()
	goruntime.Goexit()
}

// fails runs assert with a recording TB and returns its Fatalf message, or
// "" when it passed.
func fails(t *testing.T, assert func(tb testing.TB)) string {
	f := &failure{TB: t}
	done := make(chan struct{})
	go func() { defer close(done); assert(f) }()
	<-done
	return f.msg
}

func TestRequireEnqueued(t *testing.T) {
	_, client := sqlitetest.NewEngine(t)
	first := enqueue(t, client, "notify", notify{UserID: 7, Message: "hi"})
	enqueue(t, client, "notify", notify{UserID: 42, Message: "welcome"})
	enqueue(t, client, "import", notify{})

	got := leasetest.RequireEnqueued(t, leasetest.Committed(client), "notify", func(p notify) bool { return p.UserID == 42 })
	if got.Payload.Message != "welcome" || got.Status != runtime.StatusQueued {
		t.Errorf("RequireEnqueued = %+v", got)
	}
	if all := leasetest.RequireManyEnqueued[notify](t, leasetest.Committed(client), "notify", 2, nil); all[0].ID != first {
		t.Errorf("RequireManyEnqueued: first %d, want %d (enqueue order)", all[0].ID, first)
	}
	leasetest.RequireNotEnqueued(t, leasetest.Committed(client), "notify", func(p notify) bool { return p.UserID == 99 })
	raw := leasetest.RequireEnqueued[[]byte](t, leasetest.Committed(client), "import", nil)
	if !strings.Contains(string(raw.Payload), `"user_id":0`) {
		t.Errorf("a []byte payload: %s, want it as stored", raw.Payload)
	}

	msg := fails(t, func(tb testing.TB) {
		leasetest.RequireEnqueued(tb, leasetest.Committed(client), "notify", func(p notify) bool { return p.UserID == 99 })
	})
	for _, want := range []string{`no task of type "notify" matches`, `"user_id":42`, `"message":"hi"`, `of other types: "import" (1)`} {
		if !strings.Contains(msg, want) {
			t.Errorf("failure message lacks %q:\n%s", want, msg)
		}
	}
	if msg := fails(t, func(tb testing.TB) {
		leasetest.RequireManyEnqueued[notify](tb, leasetest.Committed(client), "notify", 3, nil)
	}); !strings.Contains(msg, "2 tasks of type \"notify\" match, want 3") {
		t.Errorf("RequireManyEnqueued's failure: %q", msg)
	}
	if msg := fails(t, func(tb testing.TB) {
		leasetest.RequireNotEnqueued[notify](tb, leasetest.Committed(client), "notify", nil)
	}); !strings.Contains(msg, "want none") {
		t.Errorf("RequireNotEnqueued's failure: %q", msg)
	}
}

// A task enqueued in a transaction is visible to the assertions through
// that transaction, and not elsewhere until it commits.
func TestRequireEnqueuedInTransaction(t *testing.T) {
	engine, client := sqlitetest.NewEngine(t)
	ctx := context.Background()
	tx, err := engine.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback() //nolint:errcheck // rolled back on purpose
	if _, err := client.EnqueueTx(ctx, tx, "notify", []byte(`{"user_id":1}`)); err != nil {
		t.Fatal(err)
	}
	leasetest.RequireEnqueued(t, leasetest.In(client, tx), "notify", func(p notify) bool { return p.UserID == 1 })
	leasetest.RequireNotEnqueued[notify](t, leasetest.Committed(client), "notify", nil)
}

// WorkOne runs the task through a real worker and returns its outcome.
func TestWorkOne(t *testing.T) {
	engine, client := sqlitetest.NewEngine(t)
	id := enqueue(t, client, "notify", notify{UserID: 3})
	calls := 0
	info := leasetest.WorkOne(t, engine, func(r runtime.Registrar) error {
		return r.Handle("notify", func(_ context.Context, task *runtime.Task) error {
			calls++
			task.SetResult("sent")
			return nil
		})
	})
	if info.ID != id || info.Status != runtime.StatusSuccess || info.Result != "sent" || calls != 1 {
		t.Errorf("WorkOne = %+v", info)
	}
	if msg := fails(t, func(tb testing.TB) {
		leasetest.WorkOne(tb, engine, func(r runtime.Registrar) error { return errors.New("no handlers for you") })
	}); !strings.Contains(msg, "no handlers for you") {
		t.Errorf("a failed registration: %q", msg)
	}
}
