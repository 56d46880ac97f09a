package leasepostgres

import (
	"context"
	"database/sql"
	sqldriver "database/sql/driver"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/leasegen/leasegen/runtime/driver"
)

// notifyChannel is the LISTEN/NOTIFY channel of enqueues; a notification's
// payload is the task types enqueued, one per line.
const notifyChannel = "leasegen_tasks"

// notifyGap spaces this process's notifications: a notifying commit takes
// a lock that every other notifying commit in the cluster waits for, so
// enqueues within a gap share one notification. It bounds what coalescing
// adds to the enqueue-to-start latency.
const notifyGap = 2 * time.Millisecond

// notifyPayloadMax keeps a notification below PostgreSQL's 8,000 bytes.
const notifyPayloadMax = 7000

// wakeups carries wake-ups between processes: Notify wakes this process's
// workers at once and, coalesced, every other process's through NOTIFY;
// while a worker is subscribed, one pooled connection LISTENs and wakes
// the workers of the types each notification names. Polling stays the
// fallback: a lost notification delays a task by one poll at most.
type wakeups struct {
	local driver.LocalWakeups
	db    *sql.DB

	mu          sync.Mutex
	subscribers int
	stopListen  context.CancelFunc
	listenDone  chan struct{}
	pending     map[string]bool // types to notify
	flushing    bool            // a flusher goroutine runs
	lastNotify  time.Time
}

func newWakeups(db *sql.DB) *wakeups { return &wakeups{db: db, pending: map[string]bool{}} }

// Subscribe registers ch and starts the listener with the first
// subscriber.
func (w *wakeups) Subscribe(ch chan<- struct{}, types []string) {
	w.local.Subscribe(ch, types)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.subscribers++
	if w.subscribers == 1 {
		ctx, cancel := context.WithCancel(context.Background())
		w.stopListen, w.listenDone = cancel, make(chan struct{})
		go w.listen(ctx, w.listenDone)
	}
}

// Unsubscribe removes ch; the last subscriber's Unsubscribe stops the
// listener and waits for it to hand its connection back.
func (w *wakeups) Unsubscribe(ch chan<- struct{}) {
	w.local.Unsubscribe(ch)
	w.mu.Lock()
	w.subscribers--
	if w.subscribers > 0 {
		w.mu.Unlock()
		return
	}
	stop, done := w.stopListen, w.listenDone
	w.stopListen, w.listenDone = nil, nil
	w.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

// Notify wakes this process's workers of taskType now and notifies the
// other processes. A notification with nothing to coalesce with (none sent
// within notifyGap, none queued) goes out before Notify returns, so a
// process that exits right after its enqueue (a command, a job) still
// wakes the others; within the gap the type is queued for the next
// notification, which a short-lived goroutine sends at most once per
// notifyGap.
func (w *wakeups) Notify(taskType string) {
	w.local.Notify(taskType)
	w.mu.Lock()
	if !w.flushing && time.Since(w.lastNotify) >= notifyGap {
		w.lastNotify = time.Now()
		w.mu.Unlock()
		w.send([]string{taskType})
		return
	}
	defer w.mu.Unlock()
	w.pending[taskType] = true
	if !w.flushing {
		w.flushing = true
		go w.flush()
	}
}

// flush sends the pending types, then again while more arrive, spaced by
// notifyGap, and ends when nothing is pending.
func (w *wakeups) flush() {
	for {
		w.mu.Lock()
		wait := time.Until(w.lastNotify.Add(notifyGap))
		w.mu.Unlock()
		if wait > 0 {
			time.Sleep(wait)
		}
		w.mu.Lock()
		if len(w.pending) == 0 {
			w.flushing = false
			w.mu.Unlock()
			return
		}
		types := make([]string, 0, len(w.pending))
		for t := range w.pending {
			types = append(types, t)
		}
		clear(w.pending)
		w.lastNotify = time.Now()
		w.mu.Unlock()
		w.send(types)
	}
}

// send notifies the types, in payloads below the server's limit. A failed
// notification is dropped: the other processes' polls find the tasks.
func (w *wakeups) send(types []string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for len(types) > 0 {
		n, size := 0, 0
		for n < len(types) && (n == 0 || size+len(types[n])+1 <= notifyPayloadMax) {
			size += len(types[n]) + 1
			n++
		}
		_, _ = w.db.ExecContext(ctx, "SELECT pg_notify($1, $2)", notifyChannel, strings.Join(types[:n], "\n"))
		types = types[n:]
	}
}

// listen keeps a LISTEN connection until ctx ends, connecting again after
// a failure with backoff.
func (w *wakeups) listen(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		if w.listenOnce(ctx) {
			backoff = 100 * time.Millisecond
		}
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
			backoff = min(2*backoff, 5*time.Second)
		}
	}
}

// listenOnce LISTENs on one pooled connection until it fails or ctx
// ends, and reports whether it got as far as listening. The connection is
// discarded afterwards, never handed back with a LISTEN on it.
func (w *wakeups) listenOnce(ctx context.Context) (listened bool) {
	conn, err := w.db.Conn(ctx)
	if err != nil {
		return false
	}
	defer conn.Close()
	_ = conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return errNotPgx
		}
		pc := sc.Conn()
		if _, err := pc.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
			return sqldriver.ErrBadConn
		}
		listened = true
		w.local.NotifyAll() // a notification may have gone by while not listening
		for {
			n, err := pc.WaitForNotification(ctx)
			if err != nil {
				return sqldriver.ErrBadConn
			}
			for _, t := range strings.Split(n.Payload, "\n") {
				w.local.Notify(t)
			}
		}
	})
	return listened
}

// errNotPgx reports a pool opened with another driver than pgx's.
var errNotPgx = errors.New("leasegen: the PostgreSQL pool must use the pgx driver: open it with leasepostgres.Open")
