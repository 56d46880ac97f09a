package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

type ctxKey struct{}

// Handler middleware runs around every handler, the first listed
// outermost; it can hand the handler a context of its own and replace the
// error the task records.
func TestHandlerMiddleware(t *testing.T) {
	t.Parallel()
	e := newSQLiteEngine(t)
	var mu sync.Mutex
	var calls []string
	record := func(s string) { mu.Lock(); calls = append(calls, s); mu.Unlock() }
	named := func(name string) Middleware {
		return func(next HandlerFunc) HandlerFunc {
			return func(ctx context.Context, task *Task) error {
				record(name + " in")
				err := next(context.WithValue(ctx, ctxKey{}, name), task)
				record(name + " out")
				if err != nil {
					return fmt.Errorf("%s: %w", name, err) // %w keeps Permanent visible
				}
				return nil
			}
		}
	}
	seen := make(chan any, 1)
	cfg := Config{Logger: quietLogger(), PollInterval: 50 * time.Millisecond, Middleware: []Middleware{named("outer"), named("inner")}}
	startWorker(t, e, cfg, "a", func(ctx context.Context, _ *Task) error {
		select {
		case seen <- ctx.Value(ctxKey{}):
		default:
		}
		record("handler")
		return Permanent(errors.New("boom"))
	})
	id := enqueueN(t, e, "a", 1)[0]
	client, err := NewClient(e, ClientConfig{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(bg, 10*time.Second)
	defer cancel()
	info, err := client.Wait(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if got := <-seen; got != "inner" {
		t.Errorf("the handler's context carries %v, want the inner middleware's", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"outer in", "inner in", "handler", "inner out", "outer out"}; !slices.Equal(calls, want) {
		t.Errorf("calls %v, want %v", calls, want)
	}
	if info.Status != StatusFailed || info.LastError != "outer: inner: permanent: boom" {
		t.Errorf("task %s with error %q, want FAILED with the middlewares' error", info.Status, info.LastError)
	}
}

// Enqueue middleware sees every batch, in a transaction or not, may change
// its requests and fail the enqueue before anything is stored.
func TestEnqueueMiddleware(t *testing.T) {
	t.Parallel()
	e := newSQLiteEngine(t)
	var batches [][]string
	boost := func(next EnqueueFunc) EnqueueFunc {
		return func(ctx context.Context, reqs []Request) ([]TaskID, error) {
			var types []string
			for i := range reqs {
				types = append(types, reqs[i].Type)
				if reqs[i].Type == "refused" {
					return nil, errors.New("refused by policy")
				}
				reqs[i].Options = append(reqs[i].Options, WithPriority(9))
			}
			batches = append(batches, types)
			return next(ctx, reqs)
		}
	}
	client, err := NewClient(e, ClientConfig{EnqueueMiddleware: []EnqueueMiddleware{boost}})
	if err != nil {
		t.Fatal(err)
	}
	id, err := client.Enqueue(bg, "a", nil)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := e.db.BeginTx(bg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.EnqueueManyTx(bg, tx, []Request{{Type: "b"}, {Type: "c"}}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Enqueue(bg, "refused", nil); err == nil || err.Error() != "refused by policy" {
		t.Errorf("a refused enqueue: %v", err)
	}
	info, err := client.Get(bg, id)
	if err != nil || info.Priority != 9 {
		t.Errorf("the enqueued task: priority %d, %v; want the middleware's 9", info.Priority, err)
	}
	var n int
	if err := e.db.QueryRow("SELECT COUNT(*) FROM leasegen_tasks").Scan(&n); err != nil || n != 3 {
		t.Errorf("%d tasks stored (%v), want 3: the refused one is not", n, err)
	}
	if want := [][]string{{"a"}, {"b", "c"}}; len(batches) != 2 || !slices.Equal(batches[1], want[1]) {
		t.Errorf("batches %v, want %v", batches, want)
	}
}
