package leasesqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/driver/leasesqlite/internal/sqlitedb"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

func (s *store) RollupThroughput(ctx context.Context, settle, keep time.Duration) (int, error) {
	// s.immediate retries by itself, under the process's write lock.
	once := func(_ context.Context, op func() error) error { return op() }
	return sqlbuild.Rollup(ctx, once, settle, keep,
		func() (time.Time, time.Time, error) {
			now, err := s.q.ScheduleNow(ctx, s.db)
			if err != nil {
				return time.Time{}, time.Time{}, err
			}
			last, err := s.q.ThroughputLastCounted(ctx, s.db)
			return fromMillis(now), fromMillis(last), err
		},
		func(from, to time.Time) ([]sqlbuild.FinishedGroup, error) {
			rows, err := s.q.ThroughputCount(ctx, s.db, sqlitedb.ThroughputCountParams{FromAt: from.UnixMilli(), ToAt: to.UnixMilli()})
			return sqlbuild.Map(rows, func(r sqlitedb.ThroughputCountRow) sqlbuild.FinishedGroup {
				return sqlbuild.FinishedGroup{Type: r.TaskType, Status: r.Status, Minute: r.Minute, Tasks: r.Tasks}
			}), err
		},
		func(rows []sqlbuild.MinuteRow, trimBefore time.Time) error {
			return s.immediate(ctx, func(conn *sql.Conn) error {
				for _, r := range rows {
					err := s.q.ThroughputInsert(ctx, conn, sqlitedb.ThroughputInsertParams{
						TaskType: r.Type, MinuteAt: r.Minute.UnixMilli(), Succeeded: r.Succeeded, Failed: r.Failed, Cancelled: r.Cancelled,
					})
					if err != nil {
						return err
					}
				}
				return s.q.ThroughputTrim(ctx, conn, sqlitedb.ThroughputTrimParams{Before: trimBefore.UnixMilli()})
			})
		})
}

func (s *store) Throughput(ctx context.Context, window time.Duration) ([]leasetype.ThroughputMinute, error) {
	now, err := s.q.ScheduleNow(ctx, s.db)
	if err != nil {
		return nil, fmt.Errorf("leasegen: read the database's clock: %w", err)
	}
	rows, err := s.q.ThroughputList(ctx, s.db, sqlitedb.ThroughputListParams{Since: now - window.Milliseconds()})
	if err != nil {
		return nil, fmt.Errorf("leasegen: read the tasks finished per minute: %w", err)
	}
	return sqlbuild.Throughput(rows, func(r sqlitedb.ThroughputListRow) (time.Time, int64, int64, int64) {
		return fromMillis(r.MinuteAt), r.Succeeded, r.Failed, r.Cancelled
	}), nil
}
