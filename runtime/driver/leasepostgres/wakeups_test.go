package leasepostgres

import (
	"context"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver/drivertest"
)

// A task enqueued through another engine, as another process's would be,
// starts long before the worker's next poll: the enqueue's NOTIFY wakes
// the worker's LISTEN connection. The worker's listener hands its
// connection back when the worker stops.
func TestNotifyWakesWorkerOfAnotherEngine(t *testing.T) {
	t.Parallel()
	b := drivertest.Setup(t, &harness)
	cfg := drivertest.Config()
	cfg.PollInterval = time.Second
	started := make(chan time.Time, 10)
	w := b.StartWorker(t, cfg, map[string]runtime.HandlerFunc{"ping": func(context.Context, *runtime.Task) error {
		started <- time.Now()
		return nil
	}})
	other, err := runtime.NewClient(runtime.NewEngine(New(b.DB.Open(t))), runtime.ClientConfig{})
	dbtest.Must(t, "client of another engine", err)
	// After a second without work an idle worker polls once a second; the
	// wait before its first poll after an enqueue is then uniform in
	// 0..1s, so three starts within 200ms each happen by polling alone
	// less than once in a hundred runs.
	for i := range 3 {
		time.Sleep(3 * time.Second)
		enqueued := time.Now()
		_, err := other.Enqueue(bg, "ping", nil)
		dbtest.Must(t, "enqueue", err)
		select {
		case at := <-started:
			if lag := at.Sub(enqueued); lag > 200*time.Millisecond {
				t.Errorf("task %d started %s after its enqueue, want a wake-up within 200ms", i, lag)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("task %d did not start within 5s of its enqueue", i)
		}
	}
	stop, cancel := context.WithTimeout(bg, 5*time.Second)
	defer cancel()
	dbtest.Must(t, "stop", w.Stop(stop))
	// Stop closes the listener's connection; its server session ends a
	// moment later, once the server reads the close.
	const listening = "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()"
	deadline := time.Now().Add(5 * time.Second)
	for n := b.DB.Int(t, listening); n != 0; n = b.DB.Int(t, listening) {
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions still LISTEN 5s after the worker stopped", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
