package drivertest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime"
)

// An enqueue whose statement reached the server but whose reply never came
// back fails with ErrOutcomeUnknown, not ErrUnavailable: the task may exist.
// Retried with its idempotency key (as a unique task's generated enqueue
// is), it returns that task and stores no second one.
func testEnqueueOutcomeUnknown(t *testing.T, b *Bundle) {
	proxy, dsn := b.H.proxy(t, b.DB.DSN)
	client, err := runtime.NewClient(b.H.engine(b.H.open(t, dsn)), runtime.ClientConfig{})
	dbtest.Must(t, "client", err)
	_, err = client.Enqueue(bg, "warm", nil) // the session check, before the cut
	dbtest.Must(t, "enqueue before the cut", err)

	cut := proxy.CutBeforeReply("INSERT INTO leasegen_tasks")
	ctx, cancel := context.WithTimeout(bg, time.Second)
	defer cancel()
	_, err = client.Enqueue(ctx, "report", []byte(`{}`), runtime.WithIdempotencyKey("r-1"))
	<-cut
	if !errors.Is(err, runtime.ErrOutcomeUnknown) || errors.Is(err, runtime.ErrUnavailable) {
		t.Fatalf("enqueue without a reply: err = %v, want ErrOutcomeUnknown (and not ErrUnavailable)", err)
	}
	proxy.Resume()
	if n := b.DB.Int(t, "SELECT COUNT(*) FROM leasegen_tasks WHERE task_type = 'report'"); n != 1 {
		t.Fatalf("%d report tasks after the unanswered enqueue, want 1: the test needs the server to have run it", n)
	}
	id, err := client.Enqueue(bg, "report", []byte(`{}`), runtime.WithIdempotencyKey("r-1"))
	dbtest.Must(t, "retry with the key", err)
	stored := runtime.TaskID(b.DB.Int(t, "SELECT id FROM leasegen_tasks WHERE task_type = 'report'"))
	if n := b.DB.Int(t, "SELECT COUNT(*) FROM leasegen_tasks WHERE task_type = 'report'"); n != 1 || id != stored {
		t.Errorf("the retry returned %d and left %d report tasks; want the stored task %d and 1", id, n, stored)
	}
}
