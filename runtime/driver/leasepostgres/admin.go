package leasepostgres

import (
	"context"
	"fmt"
	"time"

	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/driver/leasepostgres/internal/pgdb"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

func (s *store) List(ctx context.Context, f leasetype.Filter) ([]leasetype.TaskInfo, error) {
	rows, err := s.q.TaskList(ctx, s.arrays, pgdb.TaskListParams{
		Status: string(f.Status), TaskType: f.Type, OwnerID: f.Owner, MinAgeUs: micros(f.OlderThan), Lim: int32(f.Limit),
		BeforeID: int64(f.BeforeID), IdempotencyKey: f.Key,
	})
	if err != nil {
		return nil, fmt.Errorf("leasegen: list tasks: %w", err)
	}
	return sqlbuild.TaskInfos(rows, taskInfoFromRow)
}

func (s *store) RetryTask(ctx context.Context, id leasetype.TaskID) (bool, error) {
	n, err := s.q.TaskRetry(ctx, s.arrays, pgdb.TaskRetryParams{ID: int64(id)})
	if err != nil {
		return false, fmt.Errorf("leasegen: retry task %d: %w", id, err)
	}
	return n > 0, nil
}

func (s *store) PurgeBatch(ctx context.Context, olderThan time.Duration, batch int) (int, error) {
	var n int64
	err := s.retry(ctx, func() error {
		var err error
		n, err = s.q.TaskPurge(ctx, s.arrays, pgdb.TaskPurgeParams{AgeUs: micros(olderThan), Lim: int32(batch)})
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
			return sqlbuild.Map(rows, func(c pgdb.TaskCountByTypeStatusRow) leasetype.TypeStatusCount {
				return leasetype.TypeStatusCount{Type: c.TaskType, Status: leasetype.Status(c.Status), Tasks: int(c.Tasks)}
			}), err
		},
		Oldest: func() (map[string]time.Time, error) {
			rows, err := s.q.TaskOldestQueued(ctx, s.db)
			return sqlbuild.ToMap(rows, func(o pgdb.TaskOldestQueuedRow) (string, time.Time) { return o.TaskType, o.Oldest.UTC() }), err
		},
		Sample: func(status leasetype.Status, limit int) ([]sqlbuild.SampleRow, error) {
			return s.sample(ctx, status, limit)
		},
		Running: func() (map[string]int, error) {
			rows, err := s.q.TaskRunningByOwner(ctx, s.db)
			return sqlbuild.ToMap(rows, func(r pgdb.TaskRunningByOwnerRow) (string, int) { return r.Owner, int(r.Tasks) }), err
		},
		Paused: func() (map[string]time.Time, error) { return s.pausedTypes(ctx) },
	})
}

// sample reads up to limit tasks of status through the partial index that
// holds that status.
func (s *store) sample(ctx context.Context, status leasetype.Status, limit int) ([]sqlbuild.SampleRow, error) {
	n := int32(limit)
	switch status {
	case leasetype.StatusQueued:
		rows, err := s.q.TaskSampleQueued(ctx, s.arrays, pgdb.TaskSampleQueuedParams{MaxRows: n})
		return sqlbuild.Map(rows, func(r pgdb.TaskSampleQueuedRow) sqlbuild.SampleRow {
			return sqlbuild.SampleRow{Type: r.TaskType, Tasks: int(r.Tasks), Oldest: r.Oldest.UTC()}
		}), err
	case leasetype.StatusRunning, leasetype.StatusCancelRequested:
		rows, err := s.q.TaskSampleActive(ctx, s.arrays, pgdb.TaskSampleActiveParams{Status: string(status), MaxRows: n})
		return sqlbuild.Map(rows, func(r pgdb.TaskSampleActiveRow) sqlbuild.SampleRow {
			return sqlbuild.SampleRow{Type: r.TaskType, Tasks: int(r.Tasks), Oldest: r.Oldest.UTC()}
		}), err
	}
	rows, err := s.q.TaskSampleFinished(ctx, s.arrays, pgdb.TaskSampleFinishedParams{Status: string(status), MaxRows: n})
	return sqlbuild.Map(rows, func(r pgdb.TaskSampleFinishedRow) sqlbuild.SampleRow {
		return sqlbuild.SampleRow{Type: r.TaskType, Tasks: int(r.Tasks), Oldest: r.Oldest.UTC()}
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
		var at time.Time
		if err := rows.Scan(&v, &at); err != nil {
			return nil, fmt.Errorf("leasegen: read applied migrations: %w", err)
		}
		applied[v] = at.UTC()
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("leasegen: read applied migrations: %w", err)
	}
	return applied, nil
}
