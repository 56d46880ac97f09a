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

func (s *store) Stats(ctx context.Context) (leasetype.QueueStats, error) {
	counts, err := s.q.TaskCountByTypeStatus(ctx, s.db)
	if err != nil {
		return leasetype.QueueStats{}, fmt.Errorf("leasegen: count tasks: %w", err)
	}
	oldest, err := s.q.TaskOldestQueued(ctx, s.db)
	if err != nil {
		return leasetype.QueueStats{}, fmt.Errorf("leasegen: oldest queued tasks: %w", err)
	}
	running, err := s.q.TaskRunningByOwner(ctx, s.db)
	if err != nil {
		return leasetype.QueueStats{}, fmt.Errorf("leasegen: running tasks by worker: %w", err)
	}
	paused, err := s.pausedTypes(ctx)
	if err != nil {
		return leasetype.QueueStats{}, err
	}
	st := sqlbuild.AssembleQueueStats(counts, oldest, running,
		func(c sqlitedb.TaskCountByTypeStatusRow) leasetype.TypeStatusCount {
			return leasetype.TypeStatusCount{Type: c.TaskType, Status: leasetype.Status(c.Status), Tasks: int(c.Tasks)}
		},
		func(o sqlitedb.TaskOldestQueuedRow) (string, time.Time) { return o.TaskType, fromMillis(o.Oldest) },
		func(r sqlitedb.TaskRunningByOwnerRow) (string, int) { return r.Owner, int(r.Tasks) },
	)
	st.Paused = paused
	return st, nil
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
