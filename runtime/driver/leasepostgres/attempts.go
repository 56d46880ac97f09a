package leasepostgres

import (
	"context"
	"fmt"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/driver/leasepostgres/internal/pgdb"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

func (s *store) RecordAttempts(ctx context.Context, recs []driver.AttemptRecord, keep int) error {
	return sqlbuild.RecordAttempts(ctx, s.retry, recs, keep,
		func(r driver.AttemptRecord) error {
			return s.q.AttemptInsert(ctx, s.arrays, pgdb.AttemptInsertParams{
				TaskID: int64(r.TaskID), Attempt: int32(r.Attempt), Worker: r.Worker, StartedAt: r.StartedAt,
				Outcome: r.Outcome, Error: sqlbuild.NullString(r.Error), DurationUs: r.Duration.Microseconds(),
			})
		},
		func(id leasetype.TaskID, upTo int) error {
			return s.q.AttemptTrim(ctx, s.arrays, pgdb.AttemptTrimParams{TaskID: int64(id), Attempt: int32(upTo)})
		})
}

func (s *store) Attempts(ctx context.Context, id leasetype.TaskID) ([]leasetype.AttemptInfo, error) {
	rows, err := s.q.AttemptList(ctx, s.arrays, pgdb.AttemptListParams{TaskID: int64(id)})
	if err != nil {
		return nil, fmt.Errorf("leasegen: read task %d's attempts: %w", id, err)
	}
	out := make([]leasetype.AttemptInfo, len(rows))
	for i, r := range rows {
		out[i] = leasetype.AttemptInfo{Attempt: int(r.Attempt), Worker: r.Worker, StartedAt: r.StartedAt.UTC(), FinishedAt: r.FinishedAt.UTC(),
			Outcome: r.Outcome, Error: r.Error.String, Duration: time.Duration(r.DurationUs) * time.Microsecond}
	}
	return out, nil
}

func (s *store) PurgeAttempts(ctx context.Context, batch int) (int, error) {
	return sqlbuild.PurgeAttempts(ctx, s.retry, batch,
		func() ([]int64, error) {
			return s.q.AttemptOrphans(ctx, s.arrays, pgdb.AttemptOrphansParams{Limit: int32(batch)})
		},
		func(ids []int64) (int64, error) {
			return s.q.AttemptDeleteTasks(ctx, s.arrays, pgdb.AttemptDeleteTasksParams{TaskIds: ids})
		})
}
