package runtime

import "sync"

// handoff holds items from many goroutines until one loop takes them: the
// executions whose handlers succeeded, for the completion loop; the keys
// whose tasks ended, for the key release loop. Handing one over never
// blocks.
type handoff[T any] struct {
	mu      sync.Mutex
	pending []T
	stopped bool
	ready   chan struct{} // signalled when pending grows
}

func newHandoff[T any]() *handoff[T] {
	return &handoff[T]{ready: make(chan struct{}, 1)}
}

// push queues items and reports true, or false once the loop has stopped.
func (q *handoff[T]) push(items ...T) bool {
	q.mu.Lock()
	if q.stopped {
		q.mu.Unlock()
		return false
	}
	q.pending = append(q.pending, items...)
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
	return true
}

// take removes and returns up to max queued items, oldest first.
func (q *handoff[T]) take(max int) []T {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := min(len(q.pending), max)
	batch := make([]T, n)
	copy(batch, q.pending)
	q.pending = append(q.pending[:0], q.pending[n:]...)
	return batch
}

func (q *handoff[T]) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.pending)
}

// stop refuses further pushes and returns what is still queued.
func (q *handoff[T]) stop() []T {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.stopped = true
	rest := q.pending
	q.pending = nil
	return rest
}

// serve hands the queued items to do, at most max at a time, as they come
// until stop is closed; then it refuses further pushes and hands do what
// is left.
func (q *handoff[T]) serve(stop <-chan struct{}, max int, do func([]T)) {
	for {
		select {
		case <-q.ready:
		case <-stop:
			do(q.stop())
			return
		}
		for batch := q.take(max); len(batch) > 0; batch = q.take(max) {
			do(batch)
		}
	}
}
