// Package testwait lets a test wait for what the code reports when it
// acts (an Observer's event, a log line) instead of sleeping or polling
// on a short period, so that a loaded machine cannot decide a test's
// outcome: it only makes the test slower.
package testwait

import (
	"sync"
	"testing"
	"time"
)

// Bound is how long a wait goes before it fails its test: a bound for a
// stuck run, far past what a loaded machine takes, never the measure of a
// test.
const Bound = time.Minute

// Recheck bounds how long a wait goes without looking again: a few state
// changes ring no bell (a client's cancel of a queued task, another
// process's completion).
const Recheck = time.Second

// A Bell rings at each change of what a test waits for. Its zero value is
// ready; it is safe for concurrent use.
type Bell struct {
	mu   sync.Mutex
	rung chan struct{} // closed, and replaced, at each ring
}

// Ring wakes every wait.
func (b *Bell) Ring() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.rung != nil {
		close(b.rung)
	}
	b.rung = make(chan struct{})
}

// Next returns a channel closed at the next ring. Take it before looking
// at the state: a ring after the look then wakes the wait.
func (b *Bell) Next() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.rung == nil {
		b.rung = make(chan struct{})
	}
	return b.rung
}

// Await checks done at each ring (and at least every Recheck) until it
// holds, failing t with what() after timeout.
func (b *Bell) Await(t testing.TB, timeout time.Duration, done func() bool, what func() string) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		next := b.Next()
		if done() {
			return
		}
		select {
		case <-next:
		case <-time.After(Recheck):
		case <-deadline.C:
			if done() {
				return
			}
			t.Fatalf("after %v: %s", timeout, what())
		}
	}
}

// Poll is how often Until looks.
const Poll = 50 * time.Millisecond

// Until checks done every Poll until it holds, failing t with what()
// after Bound: for state that nothing in the code reports when it changes
// (a server's statistics, its sessions, a database's clock passing an
// instant).
func Until(t testing.TB, done func() bool, what func() string) {
	t.Helper()
	for deadline := time.Now().Add(Bound); !done(); time.Sleep(Poll) {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", Bound, what())
		}
	}
}
