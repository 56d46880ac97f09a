package leasepostgres

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/internal/testwait"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/internal/systemtest"
)

// An enqueue through another engine, as another process's would be,
// reaches a subscriber of this driver through NOTIFY alone: no poll sends
// on the channel, so the signal proves the wake-up without timing it
// against one (under a loaded machine a wake-up took 250 - 380 ms, which a
// bound below the poll interval would read as a failure).
func TestNotifyReachesSubscriberOfAnotherEngine(t *testing.T) {
	t.Parallel()
	b := systemtest.Setup(t, &harness)
	wake := listeningSubscriber(t, b, "ping")
	other, err := runtime.NewClient(runtime.NewEngine(New(b.DB.Open(t))), runtime.ClientConfig{})
	dbtest.Must(t, "client of another engine", err)
	_, err = other.Enqueue(bg, "unrelated", nil)
	dbtest.Must(t, "enqueue", err)
	_, err = other.Enqueue(bg, "ping", nil)
	dbtest.Must(t, "enqueue", err)
	waitWake(t, wake, "another engine's enqueue")
}

// A worker starts a task another engine enqueued, and its listener hands
// its connection back when the worker stops.
func TestNotifyWakesWorkerOfAnotherEngine(t *testing.T) {
	t.Parallel()
	b := systemtest.Setup(t, &harness)
	cfg := systemtest.Config()
	cfg.PollInterval = time.Second
	started := make(chan struct{}, 10)
	w := b.StartWorker(t, cfg, map[string]runtime.HandlerFunc{"ping": func(context.Context, *runtime.Task) error {
		started <- struct{}{}
		return nil
	}})
	other, err := runtime.NewClient(runtime.NewEngine(New(b.DB.Open(t))), runtime.ClientConfig{})
	dbtest.Must(t, "client of another engine", err)
	_, err = other.Enqueue(bg, "ping", nil)
	dbtest.Must(t, "enqueue", err)
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("the task did not start within 5s of its enqueue")
	}
	stop, cancel := context.WithTimeout(bg, 5*time.Second)
	defer cancel()
	dbtest.Must(t, "stop", w.Stop(stop))
	// Stop closes the listener's connection; its server session ends a
	// moment later, once the server reads the close.
	waitListening(t, b, 0)
}

// listeningSubscriber subscribes a channel to taskType's wake-ups, waits
// until the driver's listener LISTENs, and takes the wake-up the listener
// sends everyone once it does, so the channel then signals notifications
// only.
func listeningSubscriber(t *testing.T, b *systemtest.Bundle, taskType string) <-chan struct{} {
	t.Helper()
	wake := make(chan struct{}, 1)
	b.Driver.Subscribe(wake, []string{taskType})
	t.Cleanup(func() { b.Driver.Unsubscribe(wake) })
	waitListening(t, b, 1)
	select {
	case <-wake:
	case <-time.After(time.Second):
	}
	return wake
}

// waitWake fails the test unless wake signals within 5s of after.
func waitWake(t *testing.T, wake <-chan struct{}, after string) {
	t.Helper()
	select {
	case <-wake:
	case <-time.After(5 * time.Second):
		t.Fatalf("no wake-up within 5s of %s", after)
	}
}

// waitListening waits up to 5s until want sessions other than b's LISTEN.
func waitListening(t *testing.T, b *systemtest.Bundle, want int) {
	t.Helper()
	const listening = "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()"
	var n int
	testwait.Until(t, func() bool { n = b.DB.Int(t, listening); return n == want }, func() string {
		return fmt.Sprintf("%d sessions LISTEN, want %d", n, want)
	})
}

// A process that enqueues and exits at once (a command, a job) wakes the
// workers of another: its notification is sent before the enqueue
// returns, not by a goroutine the exit would cut short. The other engine's
// pool closes right after the enqueue, as the process's would.
func TestNotifyOfAProcessThatExits(t *testing.T) {
	t.Parallel()
	b := systemtest.Setup(t, &harness)
	wake := listeningSubscriber(t, b, "ping")
	pool := b.DB.Open(t)
	other, err := runtime.NewClient(runtime.NewEngine(New(pool)), runtime.ClientConfig{})
	dbtest.Must(t, "client of another engine", err)
	_, err = other.Enqueue(bg, "ping", nil)
	dbtest.Must(t, "enqueue", err)
	dbtest.Must(t, "close the other pool", pool.Close())
	waitWake(t, wake, "an enqueue by a process that exited")
}
