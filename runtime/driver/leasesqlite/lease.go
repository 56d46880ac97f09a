package leasesqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/driver/leasesqlite/internal/sqlitedb"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// sqliteRenewChunk is the most leases one renewal statement extends.
const sqliteRenewChunk = 10000

// Renew extends the leases in one UPDATE ... RETURNING (per 10,000): the
// rows it returns are the executions that still hold their task.
func (s *store) Renew(ctx context.Context, owner string, lease time.Duration, refs []driver.LeaseRef) ([]driver.LeaseState, error) {
	renewed := make(map[driver.LeaseRef]leasetype.Status, len(refs))
	// One statement for up to sqliteRenewChunk leases: SQLite allows
	// 32,766 parameters a statement.
	for chunk := range slices.Chunk(refs, sqliteRenewChunk) {
		ids := make([]int64, len(chunk))
		for i, r := range chunk {
			ids[i] = int64(r.ID)
		}
		var rows []sqlitedb.TaskRenewManyRow
		err := s.retry(ctx, func() error {
			var err error
			rows, err = s.q.TaskRenewMany(ctx, s.db, sqlitedb.TaskRenewManyParams{LeaseMs: millis(lease), LeaseOwner: sqlbuild.NullString(owner), Ids: ids})
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("leasegen: renew %d leases: %w", len(refs), err)
		}
		for _, r := range rows {
			renewed[driver.LeaseRef{ID: leasetype.TaskID(r.ID), Attempt: int(r.Attempt)}] = leasetype.Status(r.Status)
		}
	}
	states := make([]driver.LeaseState, len(refs))
	for i, ref := range refs {
		status, held := renewed[ref]
		states[i] = driver.LeaseState{Ref: ref, Held: held, CancelRequested: held && status == leasetype.StatusCancelRequested}
	}
	return states, nil
}

func (s *store) Complete(ctx context.Context, q driver.DBTX, owner string, ref driver.LeaseRef, result string) (bool, error) {
	var n int64
	write := func() error {
		var err error
		n, err = s.q.TaskComplete(ctx, q, sqlitedb.TaskCompleteParams{
			Result: sqlbuild.NullString(result), ID: int64(ref.ID), LeaseOwner: sqlbuild.NullString(owner), Attempt: int64(ref.Attempt),
		})
		return err
	}
	var err error
	if q == driver.DBTX(s.db) {
		err = s.retry(ctx, write)
	} else {
		err = write() // inside the caller's transaction: no retry, no queueing
	}
	if err != nil {
		return false, fmt.Errorf("leasegen: complete task %d: %w", ref.ID, err)
	}
	return n == 1, nil
}

func (s *store) Fail(ctx context.Context, owner string, ref driver.LeaseRef, f driver.Failure) (bool, error) {
	next := leasetype.StatusFailed
	if f.Retry {
		next = leasetype.StatusQueued
	}
	var n int64
	err := s.retry(ctx, func() error {
		var err error
		n, err = s.q.TaskFail(ctx, s.db, sqlitedb.TaskFailParams{
			NextStatus: string(next), BackoffMs: millis(f.Backoff), LastError: sqlbuild.NullString(f.Message),
			ID: int64(ref.ID), LeaseOwner: sqlbuild.NullString(owner), Attempt: int64(ref.Attempt),
		})
		return err
	})
	if err != nil {
		return false, fmt.Errorf("leasegen: fail task %d: %w", ref.ID, err)
	}
	return n == 1, nil
}

func (s *store) Release(ctx context.Context, owner string, ref driver.LeaseRef, delay time.Duration) (bool, error) {
	var n int64
	err := s.retry(ctx, func() error {
		var err error
		n, err = s.q.TaskRelease(ctx, s.db, sqlitedb.TaskReleaseParams{
			DelayMs: millis(delay), ID: int64(ref.ID), LeaseOwner: sqlbuild.NullString(owner), Attempt: int64(ref.Attempt),
		})
		return err
	})
	if err != nil {
		return false, fmt.Errorf("leasegen: release task %d: %w", ref.ID, err)
	}
	return n == 1, nil
}

// LeasesExpired reads outside the write lock.
func (s *store) LeasesExpired(ctx context.Context) (bool, error) {
	expired, err := s.q.TaskLeasesExpired(ctx, s.db)
	if err != nil {
		return false, fmt.Errorf("leasegen: look for expired leases: %w", err)
	}
	return expired, nil
}

func (s *store) RecoverBatch(ctx context.Context, batch int) ([]driver.RecoveredTask, error) {
	var recovered []driver.RecoveredTask
	err := s.immediate(ctx, func(conn *sql.Conn) error {
		recovered = nil
		rows, err := s.q.TaskRecoverCandidates(ctx, conn, sqlitedb.TaskRecoverCandidatesParams{Limit: int64(batch)})
		if err != nil || len(rows) == 0 {
			return err
		}
		ids := make([]int64, len(rows))
		for i, r := range rows {
			ids[i] = r.ID
			recovered = append(recovered, driver.RecoveredTask{
				ID:      leasetype.TaskID(r.ID),
				Outcome: sqlbuild.RecoveryOutcome(leasetype.Status(r.Status), int(r.Attempt), int(r.FreeAttempts), int(r.MaxAttempts)),
				Overdue: time.Duration(r.OverdueMs) * time.Millisecond,
				Attempt: int(r.Attempt), Owner: r.LeaseOwner.String, StartedAt: fromNullMillis(r.StartedAt),
			})
		}
		return s.q.TaskRecoverMark(ctx, conn, sqlitedb.TaskRecoverMarkParams{Ids: ids})
	})
	if err != nil {
		return nil, fmt.Errorf("leasegen: recover expired leases: %w", err)
	}
	return recovered, nil
}

// BeginExecutionTx begins an ordinary transaction: SQLite has no network
// between the worker and its sessions.
func (s *store) BeginExecutionTx(ctx context.Context, _ time.Duration) (*sql.Tx, func(), error) {
	tx, err := s.db.BeginTx(ctx, nil)
	return tx, func() {}, err
}

func (s *store) RecordKey(ctx context.Context, tx *sql.Tx, taskType, key string, id leasetype.TaskID) (leasetype.TaskID, error) {
	n, err := s.q.IdempotencyKeyRecord(ctx, tx, sqlitedb.IdempotencyKeyRecordParams{TaskType: taskType, IdemKey: key, TaskID: int64(id)})
	if err != nil {
		return 0, fmt.Errorf("leasegen: record idempotency key of task %d: %w", id, err)
	}
	if n == 1 {
		return id, nil
	}
	holder, err := s.q.IdempotencyKeyHolder(ctx, tx, sqlitedb.IdempotencyKeyHolderParams{TaskType: taskType, IdemKey: key})
	if err != nil {
		return 0, fmt.Errorf("leasegen: read the holder of task %d's idempotency key: %w", id, err)
	}
	return leasetype.TaskID(holder), nil
}

// CompleteMany runs one grouped completion; when it changed fewer rows than
// it named, the rows are read back to tell which took effect. Reading the
// affected count instead of RETURNING rows saves a tenth of the statement.
func (s *store) CompleteMany(ctx context.Context, owner string, reqs []driver.CompletionRequest) ([]bool, error) {
	query, args := sqlbuild.CompleteManySQL(owner, reqs, sqliteDialect)
	n, err := sqlbuild.RowsAffected(ctx, s.retry, s.db, query, args)
	if err != nil {
		return nil, fmt.Errorf("leasegen: complete %d tasks: %w", len(reqs), err)
	}
	return sqlbuild.CompletedRows(owner, reqs, n, func(ids []int64) ([]sqlbuild.RowState, error) { return s.rowStates(ctx, ids) })
}

// rowStates reads the rows of ids back after a grouped write.
func (s *store) rowStates(ctx context.Context, ids []int64) ([]sqlbuild.RowState, error) {
	rows, err := s.q.TaskRowStates(ctx, s.db, sqlitedb.TaskRowStatesParams{Ids: ids})
	states := make([]sqlbuild.RowState, len(rows))
	for i, r := range rows {
		states[i] = sqlbuild.RowState{ID: leasetype.TaskID(r.ID), Attempt: int(r.Attempt), Status: leasetype.Status(r.Status), Owner: r.LeaseOwner}
	}
	return states, err
}

func (s *store) ReleaseUnstarted(ctx context.Context, owner string, refs []driver.LeaseRef) (int64, error) {
	query, args := sqlbuild.ReleaseUnstartedSQL(owner, refs, sqliteDialect)
	n, err := sqlbuild.RowsAffected(ctx, s.retry, s.db, query, args)
	if err != nil {
		return 0, fmt.Errorf("leasegen: release %d unstarted tasks: %w", len(refs), err)
	}
	return n, nil
}
