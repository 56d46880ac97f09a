package runtime

import (
	"context"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
)

// maxSeparateWrites bounds the statements that executions send one by one
// (a failure, a release, the attempt's history row, the read that checks a
// failed write) running at once in a worker. Each holds a connection of
// the pool: a worker whose 200 handlers failed at the same moment took
// 150 connections on MariaDB, all its max_connections of 151 allowed, and
// exhausted PostgreSQL's 100, and the server then refused other
// statements, the worker's heartbeats among them. Completions are grouped by the completion loop instead.
const maxSeparateWrites = 4

// writeSlots is a counting semaphore.
type writeSlots chan struct{}

// take waits for a slot until ctx ends.
func (s writeSlots) take(ctx context.Context) error {
	select {
	case s <- struct{}{}:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func (s writeSlots) give() { <-s }

// Waits between the tries of a fenced write: the first, doubling up to
// the last.
const (
	writeRetryFirst = 50 * time.Millisecond
	writeRetryLast  = time.Second
)

// writeRetry is what retryTransient needs of an engine.
type writeRetry struct {
	driver driver.Driver
	// conflicted counts a write run again after a conflict.
	conflicted func()
}

func (e *Engine) writeRetry() writeRetry {
	return writeRetry{driver: e.driver, conflicted: e.conflictRetried}
}

// retryTransient runs write again while it fails on an error that says
// nothing was wrong with it: the database was unreachable (a connection
// lost or refused, a server restarting) or rolled it back in a conflict
// (a deadlock, a lock wait timed out, a Galera certification conflict, a
// busy SQLite file). It stops when ctx ends, which bounds it: the callers
// give it the lease, past which the write is fenced out anyway. It reports
// whether write ran more than once. Only fenced writes go through it:
// repeating one whose first try committed changes nothing.
func retryTransient[T any](ctx context.Context, r writeRetry, write func() (T, error)) (T, bool, error) {
	wait := writeRetryFirst
	for tries := 1; ; tries++ {
		v, err := write()
		if err == nil {
			return v, tries > 1, nil
		}
		kind := r.driver.ErrorKind(err)
		if kind != driver.KindConflict && !unavailable(err, kind) {
			return v, tries > 1, err
		}
		select {
		case <-ctx.Done():
			return v, true, err
		case <-time.After(wait):
		}
		if kind == driver.KindConflict {
			r.conflicted()
		}
		wait = min(2*wait, writeRetryLast)
	}
}
