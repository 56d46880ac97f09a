package leasesqlite

import (
	"context"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/driver/leasesqlite/internal/sqlitedb"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

func (t tables) AttemptInsert(ctx context.Context, r driver.AttemptRecord) error {
	return t.Write(ctx, func() error {
		return t.s.q.AttemptInsert(ctx, t.q, sqlitedb.AttemptInsertParams{
			TaskID: int64(r.TaskID), Attempt: int64(r.Attempt), Worker: r.Worker, StartedAt: r.StartedAt.UnixMilli(),
			FinishedAt: sqlbuild.MillisOrNil(r.FinishedAt), Outcome: r.Outcome, Error: sqlbuild.NullString(r.Error), DurationUs: r.Duration.Microseconds(),
		})
	})
}

func (t tables) AttemptTrim(ctx context.Context, id leasetype.TaskID, upTo int) error {
	return t.Write(ctx, func() error {
		return t.s.q.AttemptTrim(ctx, t.q, sqlitedb.AttemptTrimParams{TaskID: int64(id), Attempt: int64(upTo)})
	})
}

func (t tables) AttemptList(ctx context.Context, id leasetype.TaskID) ([]leasetype.AttemptInfo, error) {
	rows, err := t.s.q.AttemptList(ctx, t.q, sqlitedb.AttemptListParams{TaskID: int64(id)})
	return sqlbuild.Map(rows, func(r sqlitedb.LeasegenAttempt) leasetype.AttemptInfo {
		return leasetype.AttemptInfo{Attempt: int(r.Attempt), Worker: r.Worker, StartedAt: fromMillis(r.StartedAt), FinishedAt: fromMillis(r.FinishedAt),
			Outcome: r.Outcome, Error: r.Error.String, Duration: time.Duration(r.DurationUs) * time.Microsecond}
	}), err
}

func (t tables) AttemptOrphans(ctx context.Context, limit int) ([]leasetype.TaskID, error) {
	ids, err := t.s.q.AttemptOrphans(ctx, t.q, sqlitedb.AttemptOrphansParams{Limit: int64(limit)})
	return sqlbuild.Map(ids, sqlbuild.ToTaskID), err
}

func (t tables) AttemptDeleteTasks(ctx context.Context, ids []leasetype.TaskID) (int, error) {
	return t.Count(ctx, func() (int64, error) {
		return t.s.q.AttemptDeleteTasks(ctx, t.q, sqlitedb.AttemptDeleteTasksParams{TaskIds: sqlbuild.Map(ids, sqlbuild.FromTaskID)})
	})
}
