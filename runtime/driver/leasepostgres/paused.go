package leasepostgres

import (
	"context"
	"time"

	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/driver/leasepostgres/internal/pgdb"
)

func (s *store) SetPaused(ctx context.Context, taskType string, paused bool) (bool, error) {
	return sqlbuild.SetPaused(ctx, s.retry, taskType, paused,
		func() (int64, error) {
			return s.q.PausedTypeInsert(ctx, s.arrays, pgdb.PausedTypeInsertParams{TaskType: taskType})
		},
		func() (int64, error) {
			return s.q.PausedTypeDelete(ctx, s.arrays, pgdb.PausedTypeDeleteParams{TaskType: taskType})
		})
}

// pausedTypes maps each paused type to when it was paused.
func (s *store) pausedTypes(ctx context.Context) (map[string]time.Time, error) {
	rows, err := s.q.PausedTypeList(ctx, s.db)
	return sqlbuild.PausedTypes(rows, err, func(r pgdb.LeasegenPausedType) (string, time.Time) { return r.TaskType, r.PausedAt.UTC() })
}
