package leasemysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/driver/leasemysql/internal/mysqldb"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

func (t tables) TaskGet(ctx context.Context, id leasetype.TaskID) (leasetype.TaskInfo, error) {
	row, err := t.s.q.TaskGet(ctx, t.q, mysqldb.TaskGetParams{ID: int64(id)})
	if errors.Is(err, sql.ErrNoRows) {
		return leasetype.TaskInfo{}, fmt.Errorf("%w: id %d", leasetype.ErrTaskNotFound, id)
	}
	if err != nil {
		return leasetype.TaskInfo{}, err
	}
	return taskInfoFromRow(row)
}

func (t tables) TaskListByOwner(ctx context.Context, owner string, statuses []leasetype.Status, limit int) ([]leasetype.TaskInfo, error) {
	rows, err := t.s.q.TaskListByOwner(ctx, t.q, mysqldb.TaskListByOwnerParams{
		OwnerID: owner, Statuses: sqlbuild.StatusStrings(statuses), Limit: int32(limit),
	})
	if err != nil {
		return nil, err
	}
	return sqlbuild.TaskInfos(rows, taskInfoFromRow)
}

func (t tables) TaskList(ctx context.Context, f leasetype.Filter) ([]leasetype.TaskInfo, error) {
	rows, err := t.s.q.TaskList(ctx, t.q, mysqldb.TaskListParams{
		Status: string(f.Status), TaskType: f.Type, OwnerID: f.Owner, MinAgeUs: micros(f.OlderThan), Limit: int32(f.Limit),
		BeforeID: int64(f.BeforeID), ErrorText: f.ErrorContains, IdempotencyKey: sql.NullString{String: f.Key, Valid: true},
	})
	if err != nil {
		return nil, err
	}
	return sqlbuild.TaskInfos(rows, taskInfoFromRow)
}

func (t tables) TaskCancelRequest(ctx context.Context, id leasetype.TaskID) (bool, error) {
	return t.Changed(ctx, func() (int64, error) {
		return t.s.q.TaskCancelRequest(ctx, t.q, mysqldb.TaskCancelRequestParams{ID: int64(id)})
	})
}

func (t tables) TaskRetry(ctx context.Context, id leasetype.TaskID) (bool, error) {
	return t.Changed(ctx, func() (int64, error) { return t.s.q.TaskRetry(ctx, t.q, mysqldb.TaskRetryParams{ID: int64(id)}) })
}

func (t tables) TaskDiscard(ctx context.Context, id leasetype.TaskID) (bool, error) {
	return t.Changed(ctx, func() (int64, error) { return t.s.q.TaskDiscard(ctx, t.q, mysqldb.TaskDiscardParams{ID: int64(id)}) })
}

func (t tables) TaskPurge(ctx context.Context, age time.Duration, limit int) (int, error) {
	return t.Count(ctx, func() (int64, error) {
		return t.s.q.TaskPurge(ctx, t.q, mysqldb.TaskPurgeParams{AgeUs: micros(age), Limit: int32(limit)})
	})
}

func (t tables) IdempotencyKeyTasks(ctx context.Context, key string, limit int) ([]leasetype.TaskID, error) {
	ids, err := t.s.q.IdempotencyKeyTasks(ctx, t.q, mysqldb.IdempotencyKeyTasksParams{IdemKey: key, Limit: int32(limit)})
	return sqlbuild.Map(ids, sqlbuild.ToTaskID), err
}

func (t tables) IdempotencyKeyOfTask(ctx context.Context, id leasetype.TaskID) (string, error) {
	keys, err := t.s.q.IdempotencyKeyOfTask(ctx, t.q, mysqldb.IdempotencyKeyOfTaskParams{TaskID: int64(id)})
	return sqlbuild.First(keys), err
}

func (t tables) TaskCountPurgeable(ctx context.Context, age time.Duration, limit int) (int, error) {
	n, err := t.s.q.TaskCountPurgeable(ctx, t.q, mysqldb.TaskCountPurgeableParams{AgeUs: micros(age), Limit: int32(limit)})
	return int(n), err
}

func (t tables) TaskCountByTypeStatus(ctx context.Context) ([]leasetype.TypeStatusCount, error) {
	rows, err := t.s.q.TaskCountByTypeStatus(ctx, t.q)
	return sqlbuild.Map(rows, func(c mysqldb.TaskCountByTypeStatusRow) leasetype.TypeStatusCount {
		return leasetype.TypeStatusCount{Type: c.TaskType, Status: leasetype.Status(c.Status), Tasks: int(c.Tasks)}
	}), err
}

func (t tables) TaskOldestQueued(ctx context.Context) (map[string]time.Time, error) {
	rows, err := t.s.q.TaskOldestQueued(ctx, t.q)
	return sqlbuild.ToMap(rows, func(o mysqldb.TaskOldestQueuedRow) (string, time.Time) { return o.TaskType, o.Oldest }), err
}

func (t tables) TaskSampleStatus(ctx context.Context, status leasetype.Status, limit int) ([]driver.StatusSample, error) {
	rows, err := t.s.q.TaskSampleStatus(ctx, t.q, mysqldb.TaskSampleStatusParams{Status: string(status), Limit: int32(limit)})
	return sqlbuild.Map(rows, func(r mysqldb.TaskSampleStatusRow) driver.StatusSample {
		return driver.StatusSample{Type: r.TaskType, Tasks: int(r.Tasks), Oldest: r.Oldest}
	}), err
}

func (t tables) TaskRunningByOwner(ctx context.Context) (map[string]int, error) {
	rows, err := t.s.q.TaskRunningByOwner(ctx, t.q)
	return sqlbuild.ToMap(rows, func(r mysqldb.TaskRunningByOwnerRow) (string, int) { return r.Owner, int(r.Tasks) }), err
}
