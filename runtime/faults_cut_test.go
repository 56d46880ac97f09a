package runtime

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
)

// cutRun is a fleet of healthy workers plus one worker whose every
// connection goes through a proxy that cuts it off at a chosen statement,
// holding back its closes as a partition does. Each handler writes its
// effect and completes in one transaction (idempotent ones through
// RunIdempotent).
type cutRun struct {
	b     *testBundle
	book  ledger
	proxy *dbtest.Proxy
	cut   *Worker
	tasks int
}

// newCutRun enqueues n tasks of ms milliseconds and starts healthy workers
// and the cut-off one, all with cfg.
func newCutRun(t *testing.T, n, healthy int, ms int, cfg Config, idempotent bool) *cutRun {
	t.Helper()
	b := setup(t)
	b.db.Exec(t, effectsTable)
	reqs := make([]Request, n)
	for i := range reqs {
		reqs[i] = Request{Type: "work", Payload: fmt.Appendf(nil, "%d", ms), Options: []EnqueueOption{WithMaxAttempts(100)}}
	}
	_, err := b.client.EnqueueMany(bg, reqs)
	dbtest.Must(t, "enqueue", err)
	r := &cutRun{b: b, proxy: dbtest.NewProxy(t, b.db.DSN), tasks: n}
	for i := range healthy + 1 {
		cfg.WorkerID = fmt.Sprintf("w%d", i)
		db := b.db.Open(t)
		if i == healthy {
			cfg.WorkerID = "cut"
			db = openDSN(t, r.proxy.DSN(t, b.db.DSN))
		}
		w, err := NewWorker(MySQL(db), cfg)
		dbtest.Must(t, "worker", err)
		owner := cfg.WorkerID
		dbtest.Must(t, "handle", w.Handle("work", func(ctx context.Context, task *Task) error {
			i := r.book.start(task, owner)
			time.Sleep(time.Duration(ms) * time.Millisecond)
			if !idempotent {
				err := commitEffect(ctx, db, task, owner, func() { r.book.end(i) })
				if err != nil && r.book.intervals()[i].End.IsZero() {
					r.book.end(i)
				}
				return err
			}
			// The execution holds the task until its context ends: after its
			// commit, or when it self-fences (a COMMIT held up by the cut
			// may still be in flight then).
			context.AfterFunc(ctx, func() { r.book.end(i) })
			return RunIdempotent(ctx, task, "", func(ctx context.Context, tx *sql.Tx) error {
				_, err := tx.ExecContext(ctx, "INSERT INTO effects (task_id, attempt, owner) VALUES (?, ?, ?)", task.ID, task.Attempt, owner)
				return err
			})
		}, WithBackoff(fastBackoff)))
		dbtest.Must(t, "start", w.Start(bg))
		if owner == "cut" {
			r.cut = w
		}
		t.Cleanup(func() {
			r.proxy.Resume()
			ctx, cancel := context.WithTimeout(bg, 10*time.Second)
			defer cancel()
			_ = w.Stop(ctx)
		})
	}
	return r
}

// longestHealthyGap is the longest time in [from, to] in which no healthy
// worker's handler started.
func (r *cutRun) longestHealthyGap(from, to time.Time) time.Duration {
	starts := []time.Time{from, to}
	for _, iv := range r.book.intervals() {
		if iv.Owner != "cut" && iv.Start.After(from) && iv.Start.Before(to) {
			starts = append(starts, iv.Start)
		}
	}
	slices.SortFunc(starts, time.Time.Compare)
	var longest time.Duration
	for i := 1; i < len(starts); i++ {
		longest = max(longest, starts[i].Sub(starts[i-1]))
	}
	return longest
}

func (r *cutRun) waitSucceeded(t *testing.T, want int, timeout time.Duration) {
	t.Helper()
	(&faultRun{b: r.b}).waitFinished(t, want, timeout)
}

// A worker cut off right after it locked the global limit row (a claim's
// SELECT ... FOR UPDATE answered, then nothing more reaches the server or
// comes back, and no close either) stops the other workers' claims only
// until the server ends its idle session, claimSessionIdle later, not for as
// long as the cut lasts. Nothing is lost and nothing runs twice at once.
func TestFaultCutAtLimitLock(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	// Claims wait for the limit row up to a lease: longer than the bound.
	cfg.LeaseTimeout, cfg.HeartbeatInterval = 5*time.Second, time.Second
	cfg.GlobalLimit, cfg.MaxConcurrency = 8, 8
	r := newCutRun(t, 4000, 2, 5, cfg, false)
	r.waitSucceeded(t, 100, time.Minute)

	const cutFor = 8 * time.Second
	cut := r.proxy.CutAfter("FROM leasegen_limits")
	select {
	case <-cut:
	case <-time.After(30 * time.Second):
		t.Fatal("the cut-off worker never locked the limit row")
	}
	cutAt := time.Now()
	time.Sleep(cutFor)
	healedAt := time.Now()
	r.proxy.Resume()
	gap := r.longestHealthyGap(cutAt, healedAt)

	r.waitSucceeded(t, r.tasks, 2*time.Minute)
	checkEffects(t, r.b.db, r.tasks)
	reran := checkLedger(t, r.book.intervals())
	if bound := claimSessionIdle + 1500*time.Millisecond; gap > bound {
		t.Errorf("no healthy worker started a task for %s of an %s cut at the limit lock; bound %s (the server's idle timeout for the claim session, %s, plus a claim)",
			gap.Round(time.Millisecond), cutFor, bound, claimSessionIdle)
	}
	t.Logf("cut at the limit lock for %s: the healthy workers' longest pause in task starts %s (session idle bound %s); %d tasks ran again, 0 lost",
		cutFor, gap.Round(time.Millisecond), claimSessionIdle, reran)
}

// A worker cut off inside an idempotent handler's transaction, after its
// fenced completion and before its COMMIT, holds the task's row lock only
// until the server ends the idle session (lease + 1s): then the
// transaction rolls back, the task is recovered and runs once more
// elsewhere, while the cut still lasts, and its effect exists exactly once.
func TestFaultCutBeforeIdempotentCommit(t *testing.T) {
	t.Parallel()
	cfg := testConfig() // lease 1s
	cfg.MaxConcurrency = 4
	r := newCutRun(t, 600, 1, 20, cfg, true)
	r.waitSucceeded(t, 50, time.Minute)

	const cutFor = 10 * time.Second
	cut := r.proxy.CutAfter("status = 'SUCCESS'")
	select {
	case <-cut:
	case <-time.After(30 * time.Second):
		t.Fatal("the cut-off worker never completed a task")
	}
	cutAt := time.Now()
	// The tasks the cut-off worker held, the one in its COMMIT among them.
	rows, err := r.b.db.DB.Query("SELECT id FROM leasegen_tasks WHERE lease_owner = 'cut' AND status IN ('RUNNING', 'CANCEL_REQUESTED')")
	dbtest.Must(t, "held tasks", err)
	var held []TaskID
	for rows.Next() {
		var id TaskID
		dbtest.Must(t, "scan", rows.Scan(&id))
		held = append(held, id)
	}
	dbtest.Must(t, "held tasks", rows.Err())
	if len(held) == 0 {
		t.Fatal("the cut-off worker held no task at the cut")
	}
	bound := cfg.LeaseTimeout + time.Second + time.Second + cfg.RecoveryInterval + cfg.PollInterval + time.Second
	for _, id := range held {
		r.b.waitStatus(t, id, StatusSuccess, bound)
	}
	doneIn := time.Since(cutAt)
	if doneIn >= cutFor {
		t.Fatalf("the held tasks finished %s after the cut, not before it healed", doneIn)
	}
	time.Sleep(cutFor - doneIn)
	r.proxy.Resume()
	r.waitSucceeded(t, r.tasks, 2*time.Minute)
	checkEffects(t, r.b.db, r.tasks)
	reran := checkLedger(t, r.book.intervals())
	t.Logf("cut before an idempotent COMMIT: the %d tasks the cut-off worker held finished elsewhere %s after the cut (bound %s, cut %s); %d ran again, every effect once",
		len(held), doneIn.Round(time.Millisecond), bound, cutFor, reran)
}

// An enqueue whose statement reached the server but whose reply never came
// back fails with ErrOutcomeUnknown, not ErrUnavailable: the task may exist.
// Retried with its idempotency key (as a unique task's generated enqueue
// is), it returns that task and stores no second one.
func TestEnqueueOutcomeUnknown(t *testing.T) {
	t.Parallel()
	b := setup(t)
	proxy := dbtest.NewProxy(t, b.db.DSN)
	client, err := NewClient(MySQL(openDSN(t, proxy.DSN(t, b.db.DSN))), ClientConfig{})
	dbtest.Must(t, "client", err)
	_, err = client.Enqueue(bg, "warm", nil) // the session check, before the cut
	dbtest.Must(t, "enqueue before the cut", err)

	cut := proxy.CutBeforeReply("INSERT INTO leasegen_tasks")
	ctx, cancel := context.WithTimeout(bg, time.Second)
	defer cancel()
	_, err = client.Enqueue(ctx, "report", []byte(`{}`), WithIdempotencyKey("r-1"))
	<-cut
	if !errors.Is(err, ErrOutcomeUnknown) || errors.Is(err, ErrUnavailable) {
		t.Fatalf("enqueue without a reply: err = %v, want ErrOutcomeUnknown (and not ErrUnavailable)", err)
	}
	proxy.Resume()
	if n := b.db.Int(t, "SELECT COUNT(*) FROM leasegen_tasks WHERE task_type = 'report'"); n != 1 {
		t.Fatalf("%d report tasks after the unanswered enqueue, want 1: the test needs the server to have run it", n)
	}
	id, err := client.Enqueue(bg, "report", []byte(`{}`), WithIdempotencyKey("r-1"))
	dbtest.Must(t, "retry with the key", err)
	stored := TaskID(b.db.Int(t, "SELECT id FROM leasegen_tasks WHERE task_type = 'report'"))
	if n := b.db.Int(t, "SELECT COUNT(*) FROM leasegen_tasks WHERE task_type = 'report'"); n != 1 || id != stored {
		t.Errorf("the retry returned %d and left %d report tasks; want the stored task %d and 1", id, n, stored)
	}
}
