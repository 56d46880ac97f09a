package leasemysql

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/driver/leasemysql/internal/mysqldb"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// Renew extends every lease in refs with one UPDATE, then reads the rows back
// to learn which executions still hold their task: MySQL has no UPDATE ...
// RETURNING. A row is held when owner and attempt match and its lease is
// unexpired after the UPDATE; anything else is lost.
func (s *store) Renew(ctx context.Context, owner string, lease time.Duration, refs []driver.LeaseRef) ([]driver.LeaseState, error) {
	ids := make([]int64, len(refs))
	for i, r := range refs {
		ids[i] = int64(r.ID)
	}
	var rows []mysqldb.TaskLeaseStatesRow
	err := s.retry(ctx, func() error {
		_, err := s.q.TaskRenewMany(ctx, s.db, mysqldb.TaskRenewManyParams{
			LeaseUs: micros(lease), LeaseOwner: owner, Ids: ids,
		})
		if err != nil {
			return err
		}
		rows, err = s.q.TaskLeaseStates(ctx, s.db, mysqldb.TaskLeaseStatesParams{Ids: ids})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("leasegen: renew %d leases: %w", len(refs), err)
	}
	byID := make(map[int64]mysqldb.TaskLeaseStatesRow, len(rows))
	for _, r := range rows {
		byID[r.ID] = r
	}
	states := make([]driver.LeaseState, len(refs))
	for i, ref := range refs {
		r, ok := byID[int64(ref.ID)]
		held := ok && r.Alive == 1 && r.LeaseOwner == owner && int(r.Attempt) == ref.Attempt &&
			(leasetype.Status(r.Status) == leasetype.StatusRunning || leasetype.Status(r.Status) == leasetype.StatusCancelRequested)
		states[i] = driver.LeaseState{
			Ref:             ref,
			Held:            held,
			CancelRequested: held && leasetype.Status(r.Status) == leasetype.StatusCancelRequested,
		}
	}
	return states, nil
}

func (s *store) Complete(ctx context.Context, q driver.DBTX, owner string, ref driver.LeaseRef, result string) (bool, error) {
	n, err := s.q.TaskComplete(ctx, q, mysqldb.TaskCompleteParams{
		Result:     sqlbuild.NullString(result),
		ID:         int64(ref.ID),
		LeaseOwner: owner,
		Attempt:    int32(ref.Attempt),
	})
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
	n, err := s.q.TaskFail(ctx, s.db, mysqldb.TaskFailParams{
		NextStatus: string(next),
		BackoffUs:  micros(f.Backoff),
		LastError:  sqlbuild.NullString(f.Message),
		ID:         int64(ref.ID),
		LeaseOwner: owner,
		Attempt:    int32(ref.Attempt),
	})
	if err != nil {
		return false, fmt.Errorf("leasegen: fail task %d: %w", ref.ID, err)
	}
	return n == 1, nil
}

func (s *store) Release(ctx context.Context, owner string, ref driver.LeaseRef, delay time.Duration) (bool, error) {
	n, err := s.q.TaskRelease(ctx, s.db, mysqldb.TaskReleaseParams{
		DelayUs:    micros(delay),
		ID:         int64(ref.ID),
		LeaseOwner: owner,
		Attempt:    int32(ref.Attempt),
	})
	if err != nil {
		return false, fmt.Errorf("leasegen: release task %d: %w", ref.ID, err)
	}
	return n == 1, nil
}

func (s *store) RecordKey(ctx context.Context, tx *sql.Tx, taskType, key string, id leasetype.TaskID) (leasetype.TaskID, error) {
	n, err := s.q.IdempotencyKeyRecord(ctx, tx, mysqldb.IdempotencyKeyRecordParams{
		TaskType: taskType, IdemKey: key, TaskID: int64(id),
	})
	if err != nil {
		return 0, fmt.Errorf("leasegen: record idempotency key of task %d: %w", id, err)
	}
	if n == 1 {
		return id, nil
	}
	holder, err := s.q.IdempotencyKeyHolder(ctx, tx, mysqldb.IdempotencyKeyHolderParams{TaskType: taskType, IdemKey: key})
	if err != nil {
		return 0, fmt.Errorf("leasegen: read the holder of task %d's idempotency key: %w", id, err)
	}
	return leasetype.TaskID(holder), nil
}

func (s *store) LeasesExpired(ctx context.Context) (bool, error) {
	expired, err := s.q.TaskLeasesExpired(ctx, s.db)
	if err != nil {
		return false, fmt.Errorf("leasegen: look for expired leases: %w", err)
	}
	return expired, nil
}

// RecoverBatch resolves up to batch expired leases in one transaction.
// SKIP LOCKED keeps concurrent recoverers off each other's rows.
func (s *store) RecoverBatch(ctx context.Context, batch int) ([]driver.RecoveredTask, error) {
	var recovered []driver.RecoveredTask
	err := s.retry(ctx, func() error {
		recovered = nil
		return s.boundedTx(ctx, claimSessionIdle, func(tx mysqldb.DBTX) error {
			rows, err := s.q.TaskRecoverCandidates(ctx, tx, mysqldb.TaskRecoverCandidatesParams{Limit: int32(batch)})
			if err != nil || len(rows) == 0 {
				return err
			}
			ids := make([]int64, len(rows))
			for i, r := range rows {
				ids[i] = r.ID
				recovered = append(recovered, driver.RecoveredTask{
					ID:      leasetype.TaskID(r.ID),
					Outcome: sqlbuild.RecoveryOutcome(leasetype.Status(r.Status), int(r.Attempt), int(r.FreeAttempts), int(r.MaxAttempts)),
					Overdue: time.Duration(r.OverdueUs) * time.Microsecond,
					Attempt: int(r.Attempt), Owner: r.LeaseOwner, StartedAt: r.StartedAt,
				})
			}
			return s.q.TaskRecoverMark(ctx, tx, mysqldb.TaskRecoverMarkParams{Ids: ids})
		})
	})
	if err != nil {
		return nil, fmt.Errorf("leasegen: recover expired leases: %w", err)
	}
	return recovered, nil
}

// CompleteMany runs one grouped completion; when it changed fewer rows than
// it named, the rows are read back to tell which took effect (MySQL has no
// UPDATE ... RETURNING).
func (s *store) CompleteMany(ctx context.Context, owner string, reqs []driver.CompletionRequest) ([]bool, error) {
	query, args := sqlbuild.CompleteManySQL(owner, reqs, mysqlDialect)
	n, err := sqlbuild.RowsAffected(ctx, s.retry, s.db, query, args)
	if err != nil {
		return nil, fmt.Errorf("leasegen: complete %d tasks: %w", len(reqs), err)
	}
	return sqlbuild.CompletedRows(owner, reqs, n, func(ids []int64) ([]sqlbuild.RowState, error) {
		rows, err := s.q.TaskLeaseStates(ctx, s.db, mysqldb.TaskLeaseStatesParams{Ids: ids})
		states := make([]sqlbuild.RowState, len(rows))
		for i, r := range rows {
			states[i] = sqlbuild.RowState{ID: leasetype.TaskID(r.ID), Attempt: int(r.Attempt), Status: leasetype.Status(r.Status), Owner: r.LeaseOwner}
		}
		return states, err
	})
}

func (s *store) ReleaseUnstarted(ctx context.Context, owner string, refs []driver.LeaseRef) (int64, error) {
	query, args := sqlbuild.ReleaseUnstartedSQL(owner, refs, mysqlDialect)
	n, err := sqlbuild.RowsAffected(ctx, s.retry, s.db, query, args)
	if err != nil {
		return 0, fmt.Errorf("leasegen: release %d unstarted tasks: %w", len(refs), err)
	}
	return n, nil
}
