package leasesqlite

import (
	"context"
	"time"

	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/driver/leasesqlite/internal/sqlitedb"
)

func (s *store) SetPaused(ctx context.Context, taskType string, paused bool) (bool, error) {
	return sqlbuild.SetPaused(ctx, s.retry, taskType, paused,
		func() (int64, error) {
			return s.q.PausedTypeInsert(ctx, s.db, sqlitedb.PausedTypeInsertParams{TaskType: taskType})
		},
		func() (int64, error) {
			return s.q.PausedTypeDelete(ctx, s.db, sqlitedb.PausedTypeDeleteParams{TaskType: taskType})
		})
}

// pausedTypes maps each paused type to when it was paused.
func (s *store) pausedTypes(ctx context.Context) (map[string]time.Time, error) {
	rows, err := s.q.PausedTypeList(ctx, s.db)
	return sqlbuild.PausedTypes(rows, err, func(r sqlitedb.LeasegenPausedType) (string, time.Time) { return r.TaskType, fromMillis(r.PausedAt) })
}
