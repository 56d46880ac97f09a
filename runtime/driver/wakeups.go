package driver

import (
	"slices"
	"sync"
)

// LocalWakeups is the wake-up registry of one process: Notify wakes the
// subscribers of this process, never another's. A driver whose database
// can carry wake-ups between processes (PostgreSQL's LISTEN/NOTIFY) has no
// use for it; the others embed it. The zero value is ready to use.
type LocalWakeups struct {
	mu      sync.Mutex
	waiters map[chan<- struct{}][]string // a worker's wake channel -> its types
}

// Subscribe registers a worker's wake channel for its task types.
func (l *LocalWakeups) Subscribe(ch chan<- struct{}, types []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.waiters == nil {
		l.waiters = map[chan<- struct{}][]string{}
	}
	l.waiters[ch] = types
}

// Unsubscribe removes a channel Subscribe registered.
func (l *LocalWakeups) Unsubscribe(ch chan<- struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.waiters, ch)
}

// Notify wakes the subscribers that handle taskType, without blocking: a
// channel that holds a wake-up already needs no second one.
func (l *LocalWakeups) Notify(taskType string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for ch, types := range l.waiters {
		if !slices.Contains(types, taskType) {
			continue
		}
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// NotifyAll wakes every subscriber, without blocking: for a driver that
// may have missed wake-ups of other processes (a listener reconnecting).
func (l *LocalWakeups) NotifyAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for ch := range l.waiters {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}
