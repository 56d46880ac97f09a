package leasesqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/driver/leasesqlite/internal/sqlitedb"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

func (t tables) TaskGet(ctx context.Context, id leasetype.TaskID) (leasetype.TaskInfo, error) {
	row, err := t.s.q.TaskGet(ctx, t.q, sqlitedb.TaskGetParams{ID: int64(id)})
	if errors.Is(err, sql.ErrNoRows) {
		return leasetype.TaskInfo{}, fmt.Errorf("%w: id %d", leasetype.ErrTaskNotFound, id)
	}
	if err != nil {
		return leasetype.TaskInfo{}, err
	}
	return taskInfoFromSQLite(row)
}

func (t tables) TaskListByOwner(ctx context.Context, owner string, statuses []leasetype.Status, limit int) ([]leasetype.TaskInfo, error) {
	rows, err := t.s.q.TaskListByOwner(ctx, t.q, sqlitedb.TaskListByOwnerParams{
		OwnerID: owner, Statuses: sqlbuild.StatusStrings(statuses), Limit: int64(limit),
	})
	if err != nil {
		return nil, err
	}
	return sqlbuild.TaskInfos(rows, taskInfoFromSQLite)
}

func (t tables) TaskList(ctx context.Context, f leasetype.Filter) ([]leasetype.TaskInfo, error) {
	rows, err := t.s.q.TaskList(ctx, t.q, sqlitedb.TaskListParams{
		Status: string(f.Status), TaskType: f.Type, OwnerID: f.Owner, MinAgeMs: millis(f.OlderThan), Lim: int64(f.Limit),
		BeforeID: int64(f.BeforeID), ErrorText: f.ErrorContains, IdempotencyKey: f.Key,
	})
	if err != nil {
		return nil, err
	}
	return sqlbuild.TaskInfos(rows, taskInfoFromSQLite)
}

func (t tables) TaskCancelRequest(ctx context.Context, id leasetype.TaskID) (bool, error) {
	return t.Changed(ctx, func() (int64, error) {
		return t.s.q.TaskCancelRequest(ctx, t.q, sqlitedb.TaskCancelRequestParams{ID: int64(id)})
	})
}

func (t tables) TaskRetry(ctx context.Context, id leasetype.TaskID) (bool, error) {
	return t.Changed(ctx, func() (int64, error) { return t.s.q.TaskRetry(ctx, t.q, sqlitedb.TaskRetryParams{ID: int64(id)}) })
}

func (t tables) TaskDiscard(ctx context.Context, id leasetype.TaskID) (bool, error) {
	return t.Changed(ctx, func() (int64, error) { return t.s.q.TaskDiscard(ctx, t.q, sqlitedb.TaskDiscardParams{ID: int64(id)}) })
}

func (t tables) TaskPurge(ctx context.Context, age time.Duration, limit int) (int, error) {
	return t.Count(ctx, func() (int64, error) {
		return t.s.q.TaskPurge(ctx, t.q, sqlitedb.TaskPurgeParams{AgeMs: millis(age), Lim: int64(limit)})
	})
}

func (t tables) IdempotencyKeyTasks(ctx context.Context, key string, limit int) ([]leasetype.TaskID, error) {
	ids, err := t.s.q.IdempotencyKeyTasks(ctx, t.q, sqlitedb.IdempotencyKeyTasksParams{IdemKey: key, Limit: int64(limit)})
	return sqlbuild.Map(ids, sqlbuild.ToTaskID), err
}

func (t tables) IdempotencyKeyOfTask(ctx context.Context, id leasetype.TaskID) (string, error) {
	keys, err := t.s.q.IdempotencyKeyOfTask(ctx, t.q, sqlitedb.IdempotencyKeyOfTaskParams{TaskID: int64(id)})
	return sqlbuild.First(keys), err
}

func (t tables) TaskCountPurgeable(ctx context.Context, age time.Duration, limit int) (int, error) {
	n, err := t.s.q.TaskCountPurgeable(ctx, t.q, sqlitedb.TaskCountPurgeableParams{AgeMs: millis(age), Lim: int64(limit)})
	return int(n), err
}

func (t tables) TaskCountByTypeStatus(ctx context.Context) ([]leasetype.TypeStatusCount, error) {
	rows, err := t.s.q.TaskCountByTypeStatus(ctx, t.q)
	return sqlbuild.Map(rows, func(c sqlitedb.TaskCountByTypeStatusRow) leasetype.TypeStatusCount {
		return leasetype.TypeStatusCount{Type: c.TaskType, Status: leasetype.Status(c.Status), Tasks: int(c.Tasks)}
	}), err
}

func (t tables) TaskOldestQueued(ctx context.Context) (map[string]time.Time, error) {
	rows, err := t.s.q.TaskOldestQueued(ctx, t.q)
	return sqlbuild.ToMap(rows, func(o sqlitedb.TaskOldestQueuedRow) (string, time.Time) { return o.TaskType, fromMillis(o.Oldest) }), err
}

// TaskSampleStatus reads through the partial index that holds status.
func (t tables) TaskSampleStatus(ctx context.Context, status leasetype.Status, limit int) ([]driver.StatusSample, error) {
	n := int64(limit)
	switch status {
	case leasetype.StatusQueued:
		rows, err := t.s.q.TaskSampleQueued(ctx, t.q, sqlitedb.TaskSampleQueuedParams{MaxRows: n})
		return sqlbuild.Map(rows, func(r sqlitedb.TaskSampleQueuedRow) driver.StatusSample {
			return driver.StatusSample{Type: r.TaskType, Tasks: int(r.Tasks), Oldest: fromMillis(r.Oldest)}
		}), err
	case leasetype.StatusRunning, leasetype.StatusCancelRequested:
		rows, err := t.s.q.TaskSampleActive(ctx, t.q, sqlitedb.TaskSampleActiveParams{Status: string(status), MaxRows: n})
		return sqlbuild.Map(rows, func(r sqlitedb.TaskSampleActiveRow) driver.StatusSample {
			return driver.StatusSample{Type: r.TaskType, Tasks: int(r.Tasks), Oldest: fromMillis(r.Oldest)}
		}), err
	}
	rows, err := t.s.q.TaskSampleFinished(ctx, t.q, sqlitedb.TaskSampleFinishedParams{Status: string(status), MaxRows: n})
	return sqlbuild.Map(rows, func(r sqlitedb.TaskSampleFinishedRow) driver.StatusSample {
		return driver.StatusSample{Type: r.TaskType, Tasks: int(r.Tasks), Oldest: fromMillis(r.Oldest)}
	}), err
}

func (t tables) TaskRunningByOwner(ctx context.Context) (map[string]int, error) {
	rows, err := t.s.q.TaskRunningByOwner(ctx, t.q)
	return sqlbuild.ToMap(rows, func(r sqlitedb.TaskRunningByOwnerRow) (string, int) { return r.Owner, int(r.Tasks) }), err
}
