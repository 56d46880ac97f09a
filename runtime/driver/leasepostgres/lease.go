package leasepostgres

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/driver/leasepostgres/internal/pgdb"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// Renew extends every lease in refs with one UPDATE ... RETURNING: a
// returned row at the ref's attempt is still held.
func (s *store) Renew(ctx context.Context, owner string, lease time.Duration, refs []driver.LeaseRef) ([]driver.LeaseState, error) {
	var rows []pgdb.TaskRenewManyRow
	err := s.retry(ctx, func() error {
		var err error
		rows, err = s.q.TaskRenewMany(ctx, s.arrays, pgdb.TaskRenewManyParams{LeaseUs: micros(lease), LeaseOwner: owner, Ids: refIDs(refs)})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("leasegen: renew %d leases: %w", len(refs), err)
	}
	renewed := make(map[driver.LeaseRef]leasetype.Status, len(rows))
	for _, r := range rows {
		renewed[driver.LeaseRef{ID: leasetype.TaskID(r.ID), Attempt: int(r.Attempt)}] = leasetype.Status(r.Status)
	}
	states := make([]driver.LeaseState, len(refs))
	for i, ref := range refs {
		status, held := renewed[ref]
		states[i] = driver.LeaseState{Ref: ref, Held: held, CancelRequested: held && status == leasetype.StatusCancelRequested}
	}
	return states, nil
}

func refIDs(refs []driver.LeaseRef) []int64 {
	ids := make([]int64, len(refs))
	for i, r := range refs {
		ids[i] = int64(r.ID)
	}
	return ids
}

func refAttempts(refs []driver.LeaseRef) []int32 {
	attempts := make([]int32, len(refs))
	for i, r := range refs {
		attempts[i] = int32(r.Attempt)
	}
	return attempts
}

func (s *store) Complete(ctx context.Context, q driver.DBTX, owner string, ref driver.LeaseRef, result string) (bool, error) {
	n, err := s.q.TaskComplete(ctx, q, pgdb.TaskCompleteParams{
		Result: sqlbuild.NullString(result), ID: int64(ref.ID), LeaseOwner: owner, Attempt: int32(ref.Attempt),
	})
	if err != nil {
		return false, fmt.Errorf("leasegen: complete task %d: %w", ref.ID, err)
	}
	return n == 1, nil
}

// CompleteMany completes the executions with one statement over arrays;
// the ids it returns took effect.
func (s *store) CompleteMany(ctx context.Context, owner string, reqs []driver.CompletionRequest) ([]bool, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	ids := make([]int64, len(reqs))
	oneAttempt, noResult := true, true
	for i, r := range reqs {
		ids[i] = int64(r.Ref.ID)
		oneAttempt = oneAttempt && r.Ref.Attempt == reqs[0].Ref.Attempt
		noResult = noResult && r.Result == ""
	}
	var done []int64
	err := s.retry(ctx, func() error {
		var err error
		if oneAttempt && noResult {
			done, err = s.q.TaskCompleteManyAttempt(ctx, s.arrays, pgdb.TaskCompleteManyAttemptParams{
				Ids: ids, Attempt: int32(reqs[0].Ref.Attempt), LeaseOwner: owner})
			return err
		}
		p := pgdb.TaskCompleteManyParams{LeaseOwner: owner, Ids: ids, Attempts: make([]int32, len(reqs)), Results: make([]string, len(reqs))}
		for i, r := range reqs {
			p.Attempts[i], p.Results[i] = int32(r.Ref.Attempt), r.Result
		}
		done, err = s.q.TaskCompleteMany(ctx, s.arrays, p)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("leasegen: complete %d tasks: %w", len(reqs), err)
	}
	landed := make(map[int64]bool, len(done))
	for _, id := range done {
		landed[id] = true
	}
	oks := make([]bool, len(reqs))
	for i, r := range reqs {
		oks[i] = landed[int64(r.Ref.ID)]
	}
	return oks, nil
}

func (s *store) Fail(ctx context.Context, owner string, ref driver.LeaseRef, f driver.Failure) (bool, error) {
	next := leasetype.StatusFailed
	if f.Retry {
		next = leasetype.StatusQueued
	}
	n, err := s.q.TaskFail(ctx, s.arrays, pgdb.TaskFailParams{
		NextStatus: string(next), BackoffUs: micros(f.Backoff), LastError: sqlbuild.NullString(f.Message),
		ID: int64(ref.ID), LeaseOwner: owner, Attempt: int32(ref.Attempt),
	})
	if err != nil {
		return false, fmt.Errorf("leasegen: fail task %d: %w", ref.ID, err)
	}
	return n == 1, nil
}

func (s *store) Release(ctx context.Context, owner string, ref driver.LeaseRef, delay time.Duration) (bool, error) {
	n, err := s.q.TaskRelease(ctx, s.arrays, pgdb.TaskReleaseParams{
		DelayUs: micros(delay), ID: int64(ref.ID), LeaseOwner: owner, Attempt: int32(ref.Attempt),
	})
	if err != nil {
		return false, fmt.Errorf("leasegen: release task %d: %w", ref.ID, err)
	}
	return n == 1, nil
}

func (s *store) ReleaseUnstarted(ctx context.Context, owner string, refs []driver.LeaseRef) (int64, error) {
	var n int64
	err := s.retry(ctx, func() error {
		var err error
		n, err = s.q.TaskReleaseUnstarted(ctx, s.arrays, pgdb.TaskReleaseUnstartedParams{LeaseOwner: owner, Ids: refIDs(refs), Attempts: refAttempts(refs)})
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("leasegen: release %d unstarted tasks: %w", len(refs), err)
	}
	return n, nil
}

func (s *store) LeasesExpired(ctx context.Context) (bool, error) {
	expired, err := s.q.TaskLeasesExpired(ctx, s.db)
	if err != nil {
		return false, fmt.Errorf("leasegen: look for expired leases: %w", err)
	}
	return expired, nil
}

// RecoverBatch resolves up to batch expired leases in one statement;
// SKIP LOCKED keeps concurrent recoverers off each other's rows.
func (s *store) RecoverBatch(ctx context.Context, batch int) ([]driver.RecoveredTask, error) {
	var rows []pgdb.TaskRecoverRow
	err := s.retry(ctx, func() error {
		var err error
		rows, err = s.q.TaskRecover(ctx, s.arrays, pgdb.TaskRecoverParams{Lim: int32(batch)})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("leasegen: recover expired leases: %w", err)
	}
	recovered := make([]driver.RecoveredTask, len(rows))
	for i, r := range rows {
		outcome := driver.RecoveryRequeued
		switch leasetype.Status(r.Status) {
		case leasetype.StatusFailed:
			outcome = driver.RecoveryFailed
		case leasetype.StatusCancelled:
			outcome = driver.RecoveryCancelled
		}
		recovered[i] = driver.RecoveredTask{ID: leasetype.TaskID(r.ID), Outcome: outcome, Overdue: time.Duration(r.OverdueUs) * time.Microsecond,
			Attempt: int(r.Attempt), Owner: r.LeaseOwner, StartedAt: r.StartedAt.Time.UTC()}
	}
	return recovered, nil
}

func (s *store) RecordKey(ctx context.Context, tx *sql.Tx, taskType, key string, id leasetype.TaskID) (leasetype.TaskID, error) {
	n, err := s.q.IdempotencyKeyRecord(ctx, tx, pgdb.IdempotencyKeyRecordParams{TaskType: taskType, IdemKey: key, TaskID: int64(id)})
	if err != nil {
		return 0, fmt.Errorf("leasegen: record idempotency key of task %d: %w", id, err)
	}
	if n == 1 {
		return id, nil
	}
	holder, err := s.q.IdempotencyKeyHolder(ctx, tx, pgdb.IdempotencyKeyHolderParams{TaskType: taskType, IdemKey: key})
	if err != nil {
		return 0, fmt.Errorf("leasegen: read the holder of task %d's idempotency key: %w", id, err)
	}
	return leasetype.TaskID(holder), nil
}

// BeginExecutionTx begins an idempotent execution's transaction, which the
// server ends when it sits idle for lease + 1s: a worker cut off between
// the handler's writes and its COMMIT holds the task's row, and the
// handler's, no longer than that.
func (s *store) BeginExecutionTx(ctx context.Context, lease time.Duration) (*sql.Tx, func(), error) {
	tx, err := beginBounded(ctx, s.db, lease+time.Second, "")
	return tx, func() {}, err
}

// txSessionIdle is how long the server keeps a limited claim's, a
// worker start's or a batch enqueue's transaction open after its client
// stops talking: a worker cut off in the middle of one (a partition, a
// frozen process) holds the rows it locked, the limit rows every limited
// claim waits for among them, at most this long; then the server ends its
// session and rolls the transaction back.
const txSessionIdle = 2 * time.Second

// inTx runs fn in a READ COMMITTED transaction of db's that the server
// ends after txSessionIdle without a statement, with the local settings
// also (see beginBounded).
func (s *store) inTx(ctx context.Context, db *sql.DB, also string, fn func(tx *sql.Tx) error) error {
	tx, err := beginBounded(ctx, db, txSessionIdle, also)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// orderedScans, as beginBounded's also, turns plain scans off for a
// limited claim's transaction, as leasegen_claim's SET clause does for the
// one-statement claim: its candidate queries keep to the ordered scan of
// leasegen_tasks_queue even before the table has statistics.
const orderedScans = ", set_config('enable_bitmapscan', 'off', true), set_config('enable_seqscan', 'off', true)"

// beginBounded begins a transaction that the server ends, closing the
// session, when it sits idle for idle, and applies the further
// set_config calls in also, in the same statement. The settings are local
// to the transaction, so the pooled connection keeps its own.
func beginBounded(ctx context.Context, db *sql.DB, idle time.Duration, also string) (*sql.Tx, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, notStarted{err}
	}
	set := "SELECT set_config('idle_in_transaction_session_timeout', $1, true)" + also
	if _, err := tx.ExecContext(ctx, set, strconv.FormatInt(idle.Milliseconds(), 10)); err != nil {
		_ = tx.Rollback()
		return nil, notStarted{err}
	}
	return tx, nil
}

// notStarted is a transaction that failed to begin: whatever pgx says of
// the connection, none of the transaction's writes was sent.
type notStarted struct{ err error }

func (e notStarted) Error() string { return e.err.Error() }
func (e notStarted) Unwrap() error { return e.err }

// tablesTx runs fn in a READ COMMITTED transaction that the server ends
// when it sits idle (txSessionIdle), again after a deadlock, a
// serialization failure or a lock that was not available.
func (s *store) tablesTx(ctx context.Context, fn func(driver.Tables) error) error {
	return s.retry(ctx, func() error {
		return s.inTx(ctx, s.db, "", func(tx *sql.Tx) error { return fn(s.tablesIn(tx)) })
	})
}

// WorkerLockRegistry takes the registry's lock: a row that does not exist
// yet has nothing to lock in READ COMMITTED.
func (t tables) WorkerLockRegistry(ctx context.Context) error {
	if !t.Writes.InTx {
		return nil
	}
	return t.s.q.WorkerLockRegistry(ctx, t.q)
}
