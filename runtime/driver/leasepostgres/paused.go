package leasepostgres

import (
	"context"
	"fmt"
	"time"

	"github.com/leasegen/leasegen/runtime/driver/leasepostgres/internal/pgdb"
)

func (s *store) SetPaused(ctx context.Context, taskType string, paused bool) (bool, error) {
	var n int64
	err := s.retry(ctx, func() error {
		var err error
		if paused {
			n, err = s.q.PausedTypeInsert(ctx, s.db, pgdb.PausedTypeInsertParams{TaskType: taskType})
		} else {
			n, err = s.q.PausedTypeDelete(ctx, s.db, pgdb.PausedTypeDeleteParams{TaskType: taskType})
		}
		return err
	})
	if err != nil {
		return false, fmt.Errorf("leasegen: pause or resume %s: %w", taskType, err)
	}
	return n > 0, nil
}

// pausedTypes maps each paused type to when it was paused.
func (s *store) pausedTypes(ctx context.Context) (map[string]time.Time, error) {
	rows, err := s.q.PausedTypeList(ctx, s.db)
	if err != nil {
		return nil, fmt.Errorf("leasegen: list paused task types: %w", err)
	}
	paused := make(map[string]time.Time, len(rows))
	for _, r := range rows {
		paused[r.TaskType] = r.PausedAt.UTC()
	}
	return paused, nil
}
