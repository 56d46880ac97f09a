package leasemysql

import (
	"context"
	"fmt"
	"time"

	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/driver/leasemysql/internal/mysqldb"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

func (s *store) RollupThroughput(ctx context.Context, settle, keep time.Duration) (int, error) {
	return sqlbuild.Rollup(ctx, s.retry, settle, keep,
		func() (time.Time, time.Time, error) {
			now, err := s.q.ScheduleNow(ctx, s.db)
			if err != nil {
				return now, now, err
			}
			last, err := s.q.ThroughputLastCounted(ctx, s.db)
			return now, last, err
		},
		func(from, to time.Time) ([]sqlbuild.FinishedGroup, error) {
			rows, err := s.q.ThroughputCount(ctx, s.db, mysqldb.ThroughputCountParams{FromAt: from, ToAt: to})
			return sqlbuild.Map(rows, func(r mysqldb.ThroughputCountRow) sqlbuild.FinishedGroup {
				return sqlbuild.FinishedGroup{Type: r.TaskType, Status: r.Status, Minute: r.Minute, Tasks: r.Tasks}
			}), err
		},
		func(rows []sqlbuild.MinuteRow, trimBefore time.Time) error {
			return s.boundedTx(ctx, claimSessionIdle, func(tx mysqldb.DBTX) error {
				for _, r := range rows {
					err := s.q.ThroughputInsert(ctx, tx, mysqldb.ThroughputInsertParams{
						TaskType: r.Type, MinuteAt: r.Minute, Succeeded: r.Succeeded, Failed: r.Failed, Cancelled: r.Cancelled,
					})
					if err != nil {
						return err
					}
				}
				return s.q.ThroughputTrim(ctx, tx, mysqldb.ThroughputTrimParams{Before: trimBefore})
			})
		})
}

func (s *store) Throughput(ctx context.Context, window time.Duration) ([]leasetype.ThroughputMinute, error) {
	now, err := s.q.ScheduleNow(ctx, s.db)
	if err != nil {
		return nil, fmt.Errorf("leasegen: read the database's clock: %w", err)
	}
	rows, err := s.q.ThroughputList(ctx, s.db, mysqldb.ThroughputListParams{Since: now.Add(-window)})
	if err != nil {
		return nil, fmt.Errorf("leasegen: read the tasks finished per minute: %w", err)
	}
	return sqlbuild.Throughput(rows, func(r mysqldb.ThroughputListRow) (time.Time, int64, int64, int64) {
		return r.MinuteAt, r.Succeeded, r.Failed, r.Cancelled
	}), nil
}
