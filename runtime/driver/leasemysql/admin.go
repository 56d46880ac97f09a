package leasemysql

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/driver/leasemysql/internal/mysqldb"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

func (s *store) List(ctx context.Context, f leasetype.Filter) ([]leasetype.TaskInfo, error) {
	rows, err := s.q.TaskList(ctx, s.db, mysqldb.TaskListParams{
		Status: string(f.Status), TaskType: f.Type, OwnerID: f.Owner, MinAgeUs: micros(f.OlderThan), Limit: int32(f.Limit),
		BeforeID: int64(f.BeforeID), IdempotencyKey: sql.NullString{String: f.Key, Valid: true},
	})
	if err != nil {
		return nil, fmt.Errorf("leasegen: list tasks: %w", err)
	}
	return sqlbuild.TaskInfos(rows, taskInfoFromRow)
}

func (s *store) RetryTask(ctx context.Context, id leasetype.TaskID) (bool, error) {
	n, err := s.q.TaskRetry(ctx, s.db, mysqldb.TaskRetryParams{ID: int64(id)})
	if err != nil {
		return false, fmt.Errorf("leasegen: retry task %d: %w", id, err)
	}
	return n > 0, nil
}

func (s *store) PurgeBatch(ctx context.Context, olderThan time.Duration, batch int) (int, error) {
	var n int64
	err := s.retry(ctx, func() error {
		var err error
		n, err = s.q.TaskPurge(ctx, s.db, mysqldb.TaskPurgeParams{AgeUs: micros(olderThan), Limit: int32(batch)})
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
		func(c mysqldb.TaskCountByTypeStatusRow) leasetype.TypeStatusCount {
			return leasetype.TypeStatusCount{Type: c.TaskType, Status: leasetype.Status(c.Status), Tasks: int(c.Tasks)}
		},
		func(o mysqldb.TaskOldestQueuedRow) (string, time.Time) { return o.TaskType, o.Oldest },
		func(r mysqldb.TaskRunningByOwnerRow) (string, int) { return r.Owner, int(r.Tasks) },
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
		var at time.Time
		if err := rows.Scan(&v, &at); err != nil {
			return nil, err
		}
		applied[v] = at
	}
	return applied, rows.Err()
}
