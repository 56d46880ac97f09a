package leasepostgres

import (
	"context"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/driver/leasepostgres/internal/pgdb"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

func (t tables) AttemptInsert(ctx context.Context, r driver.AttemptRecord) error {
	return t.Write(ctx, func() error {
		return t.s.q.AttemptInsert(ctx, t.q, pgdb.AttemptInsertParams{
			TaskID: int64(r.TaskID), Attempt: int32(r.Attempt), Worker: r.Worker, StartedAt: r.StartedAt,
			FinishedAt: sqlbuild.NullTime(r.FinishedAt), Outcome: r.Outcome, Error: sqlbuild.NullString(r.Error), DurationUs: r.Duration.Microseconds(),
		})
	})
}

func (t tables) AttemptTrim(ctx context.Context, id leasetype.TaskID, upTo int) error {
	return t.Write(ctx, func() error {
		return t.s.q.AttemptTrim(ctx, t.q, pgdb.AttemptTrimParams{TaskID: int64(id), Attempt: int32(upTo)})
	})
}

func (t tables) AttemptList(ctx context.Context, id leasetype.TaskID) ([]leasetype.AttemptInfo, error) {
	rows, err := t.s.q.AttemptList(ctx, t.q, pgdb.AttemptListParams{TaskID: int64(id)})
	return sqlbuild.Map(rows, func(r pgdb.LeasegenAttempt) leasetype.AttemptInfo {
		return leasetype.AttemptInfo{Attempt: int(r.Attempt), Worker: r.Worker, StartedAt: r.StartedAt.UTC(), FinishedAt: r.FinishedAt.UTC(),
			Outcome: r.Outcome, Error: r.Error.String, Duration: time.Duration(r.DurationUs) * time.Microsecond}
	}), err
}

func (t tables) AttemptOrphans(ctx context.Context, limit int) ([]leasetype.TaskID, error) {
	ids, err := t.s.q.AttemptOrphans(ctx, t.q, pgdb.AttemptOrphansParams{Limit: int32(limit)})
	return sqlbuild.Map(ids, sqlbuild.ToTaskID), err
}

func (t tables) AttemptDeleteTasks(ctx context.Context, ids []leasetype.TaskID) (int, error) {
	return t.Count(ctx, func() (int64, error) {
		return t.s.q.AttemptDeleteTasks(ctx, t.q, pgdb.AttemptDeleteTasksParams{TaskIds: sqlbuild.Map(ids, sqlbuild.FromTaskID)})
	})
}
