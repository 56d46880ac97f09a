package runtime

import (
	"context"
	"testing"
)

// A worker takes turns with the live workers that handle one of its
// types, read when it starts: a worker of other types is no peer.
func TestWorkersOfASharedTypeArePeers(t *testing.T) {
	e := newSQLiteEngine(t)
	noop := func(context.Context, *Task) error { return nil }
	cfg := func(id string) Config { return Config{WorkerID: id, Logger: quietLogger()} }
	first := startWorker(t, e, cfg("first"), "a", noop)
	if first.peers.Load() {
		t.Error("a worker alone has peers")
	}
	other := startWorker(t, e, cfg("other"), "b", noop)
	if other.peers.Load() {
		t.Error("a worker of type b counts a worker of type a as a peer")
	}
	same := startWorker(t, e, cfg("same"), "a", noop)
	if !same.peers.Load() {
		t.Error("a second worker of type a has no peer")
	}
	first.lookForPeers(bg)
	if !first.peers.Load() {
		t.Error("the first worker of type a, looking again, has no peer")
	}
}
