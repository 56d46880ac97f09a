package leasesqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/driver/leasesqlite/internal/sqlitedb"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

func (s *store) List(ctx context.Context, f leasetype.Filter) ([]leasetype.TaskInfo, error) {
	rows, err := s.q.TaskList(ctx, s.db, sqlitedb.TaskListParams{
		Status: string(f.Status), TaskType: f.Type, OwnerID: f.Owner, MinAgeMs: millis(f.OlderThan), Lim: int64(f.Limit),
		BeforeID: int64(f.BeforeID), IdempotencyKey: f.Key,
	})
	if err != nil {
		return nil, fmt.Errorf("leasegen: list tasks: %w", err)
	}
	return sqlbuild.TaskInfos(rows, taskInfoFromSQLite)
}

func (s *store) RetryTask(ctx context.Context, id leasetype.TaskID) (bool, error) {
	var n int64
	err := s.retry(ctx, func() error {
		var err error
		n, err = s.q.TaskRetry(ctx, s.db, sqlitedb.TaskRetryParams{ID: int64(id)})
		return err
	})
	if err != nil {
		return false, fmt.Errorf("leasegen: retry task %d: %w", id, err)
	}
	return n > 0, nil
}

func (s *store) PurgeBatch(ctx context.Context, olderThan time.Duration, batch int) (int, error) {
	var n int64
	err := s.retry(ctx, func() error {
		var err error
		n, err = s.q.TaskPurge(ctx, s.db, sqlitedb.TaskPurgeParams{AgeMs: millis(olderThan), Lim: int64(batch)})
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("leasegen: purge finished tasks: %w", err)
	}
	return int(n), nil
}

func (s *store) Stats(ctx context.Context, bound int) (leasetype.QueueStats, error) {
	return sqlbuild.Stats(bound, sqlbuild.StatsQueries{
		Counts: func() ([]leasetype.TypeStatusCount, error) {
			rows, err := s.q.TaskCountByTypeStatus(ctx, s.db)
			return sqlbuild.Map(rows, func(c sqlitedb.TaskCountByTypeStatusRow) leasetype.TypeStatusCount {
				return leasetype.TypeStatusCount{Type: c.TaskType, Status: leasetype.Status(c.Status), Tasks: int(c.Tasks)}
			}), err
		},
		Oldest: func() (map[string]time.Time, error) {
			rows, err := s.q.TaskOldestQueued(ctx, s.db)
			return sqlbuild.ToMap(rows, func(o sqlitedb.TaskOldestQueuedRow) (string, time.Time) { return o.TaskType, fromMillis(o.Oldest) }), err
		},
		Sample: func(status leasetype.Status, limit int) ([]sqlbuild.SampleRow, error) {
			return s.sample(ctx, status, limit)
		},
		Running: func() (map[string]int, error) {
			rows, err := s.q.TaskRunningByOwner(ctx, s.db)
			return sqlbuild.ToMap(rows, func(r sqlitedb.TaskRunningByOwnerRow) (string, int) { return r.Owner, int(r.Tasks) }), err
		},
		Paused: func() (map[string]time.Time, error) { return s.pausedTypes(ctx) },
	})
}

// sample reads up to limit tasks of status through the partial index that
// holds that status.
func (s *store) sample(ctx context.Context, status leasetype.Status, limit int) ([]sqlbuild.SampleRow, error) {
	n := int64(limit)
	switch status {
	case leasetype.StatusQueued:
		rows, err := s.q.TaskSampleQueued(ctx, s.db, sqlitedb.TaskSampleQueuedParams{MaxRows: n})
		return sqlbuild.Map(rows, func(r sqlitedb.TaskSampleQueuedRow) sqlbuild.SampleRow {
			return sqlbuild.SampleRow{Type: r.TaskType, Tasks: int(r.Tasks), Oldest: fromMillis(r.Oldest)}
		}), err
	case leasetype.StatusRunning, leasetype.StatusCancelRequested:
		rows, err := s.q.TaskSampleActive(ctx, s.db, sqlitedb.TaskSampleActiveParams{Status: string(status), MaxRows: n})
		return sqlbuild.Map(rows, func(r sqlitedb.TaskSampleActiveRow) sqlbuild.SampleRow {
			return sqlbuild.SampleRow{Type: r.TaskType, Tasks: int(r.Tasks), Oldest: fromMillis(r.Oldest)}
		}), err
	}
	rows, err := s.q.TaskSampleFinished(ctx, s.db, sqlitedb.TaskSampleFinishedParams{Status: string(status), MaxRows: n})
	return sqlbuild.Map(rows, func(r sqlitedb.TaskSampleFinishedRow) sqlbuild.SampleRow {
		return sqlbuild.SampleRow{Type: r.TaskType, Tasks: int(r.Tasks), Oldest: fromMillis(r.Oldest)}
	}), err
}

func (s *store) MigrationStatus(ctx context.Context) (map[int]time.Time, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT version, applied_at FROM leasegen_schema_migrations")
	if err != nil {
		return nil, fmt.Errorf("leasegen: read applied migrations: %w", err)
	}
	defer rows.Close()
	applied := map[int]time.Time{}
	for rows.Next() {
		var v int
		var at int64
		if err := rows.Scan(&v, &at); err != nil {
			return nil, err
		}
		applied[v] = fromMillis(at)
	}
	return applied, rows.Err()
}
