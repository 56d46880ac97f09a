package systemtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver/drivertest"
)

// EffectsTable records each task's database effect, committed in the same
// transaction as the task's fenced completion. Its key is the execution's
// (task, attempt), so that a task done twice, by two executions, shows as
// two rows; a key at all because MySQL Group Replication and Galera need
// one on every table.
const EffectsTable = `CREATE TABLE effects (task_id BIGINT NOT NULL, attempt INT NOT NULL, owner VARCHAR(128) NOT NULL, PRIMARY KEY (task_id, attempt))`

// CommitEffect writes the task's effect and completes it in one transaction.
// beforeCommit (if not nil) runs just before the commit: the commit ends the
// execution's hold on the task, so a Ledger must record the end before it.
func CommitEffect(ctx context.Context, h *drivertest.Harness, db *sql.DB, task *runtime.Task, owner string, beforeCommit func()) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	if _, err := tx.ExecContext(ctx, h.SQL("INSERT INTO effects (task_id, attempt, owner) VALUES (?, ?, ?)"), task.ID, task.Attempt, owner); err != nil {
		return fmt.Errorf("insert: %w", err)
	}
	if err := task.CompleteTx(ctx, tx); err != nil {
		return fmt.Errorf("complete: %w", err)
	}
	if beforeCommit != nil {
		beforeCommit()
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// RunEffect is CommitEffect through runtime.RunIdempotent, the path of the
// generated idempotent handlers: the server ends the transaction's session
// after the lease and a second of silence, so a worker cut off before its
// commit holds the task's row no longer than that (a transaction of the
// caller's own, as CommitEffect's, holds it until the server notices the
// connection is gone).
func RunEffect(ctx context.Context, h *drivertest.Harness, task *runtime.Task, owner string, beforeCommit func()) error {
	return runtime.RunIdempotent(ctx, task, "", func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, h.SQL("INSERT INTO effects (task_id, attempt, owner) VALUES (?, ?, ?)"), task.ID, task.Attempt, owner); err != nil {
			return fmt.Errorf("insert: %w", err)
		}
		beforeCommit()
		return nil
	})
}

// CheckEffects fails t unless every task in want has exactly one effect.
func CheckEffects(t *testing.T, db *drivertest.DB, want int) (duplicates int) {
	t.Helper()
	duplicates = db.Int(t, "SELECT COUNT(*) FROM (SELECT task_id FROM effects GROUP BY task_id HAVING COUNT(*) > 1) d")
	distinct := db.Int(t, "SELECT COUNT(DISTINCT task_id) FROM effects")
	if duplicates != 0 || distinct != want {
		t.Errorf("effects: %d tasks with one or more, %d with duplicates; want %d and 0", distinct, duplicates, want)
	}
	return duplicates
}

// Eight workers in one process over 5,000 tasks of three types, under a
// global limit and two per-type limits, with random failures: every task
// succeeds with exactly one committed effect, no two executions of a task
// overlap, and no limit is exceeded, not even for a moment.
func testManyWorkersOneProcess(t *testing.T, b *Bundle) {
	manyWorkers(t, b, []*sql.DB{b.DB.DB})
}

// ManyWorkersAcross runs the case of ManyWorkersOneProcess with its eight
// workers spread over pools, one engine a pool in turn, each committing
// its effects through its own pool: pools on the nodes of a multi-writer
// cluster (Galera) prove the limits exact across nodes.
func ManyWorkersAcross(t *testing.T, b *Bundle, pools []*sql.DB) {
	manyWorkers(t, b, pools)
}

func manyWorkers(t *testing.T, b *Bundle, pools []*sql.DB) {
	const (
		tasks       = 5000
		workers     = 8
		globalLimit = 12
	)
	typeLimits := map[string]int{"a": 3, "b": 5}
	b.DB.MustExec(t, EffectsTable)

	reqs := make([]runtime.Request, tasks)
	for i := range reqs {
		reqs[i] = runtime.Request{Type: []string{"a", "b", "c"}[i%3], Payload: []byte(`{}`),
			Options: []runtime.EnqueueOption{runtime.WithPriority(i % 4), runtime.WithMaxAttempts(10)}}
	}
	_, err := b.Client.EnqueueMany(bg, reqs)
	dbtest.Must(t, "enqueue", err)

	var book Ledger
	var commitErrors sync.Map // the errors of executions whose commit failed
	cfg := Config()
	cfg.GlobalLimit = globalLimit
	cfg.MaxConcurrency = 4
	engines := make([]*runtime.Engine, len(pools))
	for i, pool := range pools {
		engines[i] = b.Engine
		if pool != b.DB.DB {
			engines[i] = b.EngineOn(pool)
		}
	}
	for w := range workers {
		cfg.WorkerID = fmt.Sprintf("w%d", w)
		pool, engine := pools[w%len(pools)], engines[w%len(pools)]
		worker, err := runtime.NewWorker(engine, cfg)
		dbtest.Must(t, "new worker", err)
		owner := cfg.WorkerID
		handle := func(ctx context.Context, task *runtime.Task) error {
			i := book.Start(task, owner)
			time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
			if rand.IntN(100) < 3 {
				book.End(i)
				return errors.New("injected failure")
			}
			err := book.EndIfFailed(i, CommitEffect(ctx, b.H, pool, task, owner, func() { book.End(i) }))
			if err != nil {
				commitErrors.Store(err.Error(), true)
			}
			return err
		}
		for _, typ := range []string{"a", "b", "c"} {
			var opts []runtime.HandlerOption
			if n := typeLimits[typ]; n > 0 {
				opts = append(opts, runtime.WithConcurrency(n))
			}
			opts = append(opts, runtime.WithBackoff(FastBackoff))
			dbtest.Must(t, "handle", worker.Handle(typ, handle, opts...))
		}
		dbtest.Must(t, "start", worker.Start(bg))
		t.Cleanup(func() { _ = worker.Stop(bg) })
	}

	// The database's own view of RUNNING rows, sampled under contention.
	sampled := sampleRunning(t, b.DB.DB, func() int { return b.Unfinished(t) }, time.Minute)

	reran := CheckLedger(t, book.Intervals())
	total, byType := maxRunning(book.Intervals())
	if total > globalLimit {
		t.Errorf("Ledger: %d handlers ran at once, global limit %d", total, globalLimit)
	}
	for typ, n := range typeLimits {
		if byType[typ] > n {
			t.Errorf("Ledger: %d %s handlers ran at once, limit %d", byType[typ], typ, n)
		}
		if sampled.byType[typ] > n {
			t.Errorf("database: %d %s tasks RUNNING at once, limit %d", sampled.byType[typ], typ, n)
		}
	}
	if sampled.total > globalLimit {
		t.Errorf("database: %d tasks RUNNING at once, global limit %d: %+v", sampled.total, globalLimit, sampled.peak)
	}
	dups := CheckEffects(t, b.DB, tasks)
	commitErrors.Range(func(msg, _ any) bool { t.Logf("an execution's commit failed: %s", msg); return true })
	t.Logf("%d tasks, %d workers on %d pools: %d executions, %d tasks retried, %d duplicates; max running %d (limit %d), by type %v (limits %v); database samples %d, max %d, by type %v",
		tasks, workers, len(pools), len(book.Intervals()), reran, dups, total, globalLimit, byType, typeLimits, sampled.samples, sampled.total, sampled.byType)
}

type runningSample struct {
	samples int
	total   int
	byType  map[string]int
	peak    []runningRow // the rows of the sample with the most, for a failure to show
}

// runningRow is one RUNNING or CANCEL_REQUESTED row of a sample, with
// when its claim started it (the engine's own representation), so that a
// failure shows which claims overlapped.
type runningRow struct {
	ID      int64
	Type    string
	Owner   string
	Attempt int
	Started sql.NullString
}

// sampleRunning reads the RUNNING and CANCEL_REQUESTED rows in a tight loop
// until no task is unfinished, and returns the maxima it saw, by type and
// in total, with the rows of the fullest sample. It fails when no task
// finished for stall.
func sampleRunning(t *testing.T, db *sql.DB, unfinished func() int, stall time.Duration) runningSample {
	t.Helper()
	s := runningSample{byType: map[string]int{}}
	left, progressed := -1, time.Now()
	var rows []runningRow
	for i := 0; ; i++ {
		if i%50 == 0 {
			// The workers' progress decides, not the machine's speed: the
			// run fails only when no task finished for stall.
			n := unfinished()
			if n == 0 {
				return s
			}
			if left < 0 || n < left {
				left, progressed = n, time.Now()
			}
			if time.Since(progressed) > stall {
				t.Fatalf("no task finished for %s, %d left", stall, n)
			}
		}
		rows = readRunning(t, db, rows[:0])
		byType := map[string]int{}
		for _, r := range rows {
			byType[r.Type]++
			s.byType[r.Type] = max(s.byType[r.Type], byType[r.Type])
		}
		if len(rows) > s.total {
			s.total, s.peak = len(rows), slices.Clone(rows)
		}
		s.samples++
	}
}

// readRunning appends the RUNNING and CANCEL_REQUESTED rows to rows, read
// in one statement.
func readRunning(t *testing.T, db *sql.DB, rows []runningRow) []runningRow {
	t.Helper()
	q, err := db.Query("SELECT id, task_type, COALESCE(lease_owner, ''), attempt, started_at FROM leasegen_tasks WHERE status IN ('RUNNING','CANCEL_REQUESTED')")
	dbtest.Must(t, "sample", err)
	defer q.Close()
	for q.Next() {
		var r runningRow
		dbtest.Must(t, "scan", q.Scan(&r.ID, &r.Type, &r.Owner, &r.Attempt, &r.Started))
		rows = append(rows, r)
	}
	dbtest.Must(t, "sample", q.Err())
	return rows
}

// Two workers of 4 slots each, with the claim pipeline on, burn down 3,000
// quick tasks that commit an effect: the database holds more of their
// tasks RUNNING than they have slots (tasks leased ahead, waiting for a
// slot; without it a worker holds at most twice its slots: those running
// and those whose outcomes are being written), yet no more than 4 handlers of a worker run at once, every task
// succeeds with one effect, and no two executions of a task overlap.
func testPipelineRunsAheadWithinSlots(t *testing.T, b *Bundle) {
	const (
		tasks   = 3000
		workers = 2
		slots   = 4
	)
	b.DB.MustExec(t, EffectsTable)
	reqs := make([]runtime.Request, tasks)
	for i := range reqs {
		reqs[i] = runtime.Request{Type: "quick", Payload: []byte(`{}`)}
	}
	_, err := b.Client.EnqueueMany(bg, reqs)
	dbtest.Must(t, "enqueue", err)

	var book Ledger
	perWorker := make([]*Ledger, workers)
	for i := range workers {
		perWorker[i] = &Ledger{}
		cfg := Config()
		cfg.WorkerID = fmt.Sprintf("p%d", i)
		cfg.MaxConcurrency = slots
		owner, mine := cfg.WorkerID, perWorker[i]
		b.StartWorker(t, cfg, map[string]runtime.HandlerFunc{"quick": func(ctx context.Context, task *runtime.Task) error {
			n, j := book.Start(task, owner), mine.Start(task, owner)
			err := CommitEffect(ctx, b.H, b.DB.DB, task, owner, func() { book.End(n); mine.End(j) })
			return mine.EndIfFailed(j, book.EndIfFailed(n, err))
		}})
	}
	sampled := sampleRunning(t, b.DB.DB, func() int { return b.Unfinished(t) }, time.Minute)

	reran := CheckLedger(t, book.Intervals())
	CheckEffects(t, b.DB, tasks)
	for i, l := range perWorker {
		if n, _ := maxRunning(l.Intervals()); n > slots {
			t.Errorf("worker p%d ran %d handlers at once, with %d slots", i, n, slots)
		}
	}
	// Without the pipeline a worker holds its slots' tasks and as many
	// whose outcomes are being written.
	if sampled.total <= 2*workers*slots {
		t.Errorf("the database never held more than %d tasks RUNNING (%d samples): the pipeline did not lease ahead", sampled.total, sampled.samples)
	}
	t.Logf("%d tasks, %d workers x %d slots: up to %d RUNNING in the database, %d ran again", tasks, workers, slots, sampled.total, reran)
}
