package leasesqlite

import (
	"context"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/driver/leasesqlite/internal/sqlitedb"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

func (t tables) ThroughputLastCounted(ctx context.Context) (time.Time, error) {
	ms, err := t.s.q.ThroughputLastCounted(ctx, t.q)
	return fromMillis(ms), err
}

func (t tables) ThroughputCount(ctx context.Context, from, to time.Time) ([]driver.FinishedGroup, error) {
	rows, err := t.s.q.ThroughputCount(ctx, t.q, sqlitedb.ThroughputCountParams{FromAt: from.UnixMilli(), ToAt: to.UnixMilli()})
	return sqlbuild.Map(rows, func(r sqlitedb.ThroughputCountRow) driver.FinishedGroup {
		return driver.FinishedGroup{Type: r.TaskType, Status: leasetype.Status(r.Status), Minute: r.Minute, Tasks: r.Tasks}
	}), err
}

func (t tables) ThroughputInsert(ctx context.Context, r driver.MinuteRow) error {
	return t.Write(ctx, func() error {
		return t.s.q.ThroughputInsert(ctx, t.q, sqlitedb.ThroughputInsertParams{
			TaskType: r.Type, MinuteAt: r.Minute.UnixMilli(), Succeeded: r.Succeeded, Failed: r.Failed, Cancelled: r.Cancelled,
		})
	})
}

func (t tables) ThroughputTrim(ctx context.Context, before time.Time) error {
	return t.Write(ctx, func() error {
		return t.s.q.ThroughputTrim(ctx, t.q, sqlitedb.ThroughputTrimParams{Before: before.UnixMilli()})
	})
}

func (t tables) ThroughputList(ctx context.Context, since time.Time) ([]leasetype.ThroughputMinute, error) {
	rows, err := t.s.q.ThroughputList(ctx, t.q, sqlitedb.ThroughputListParams{Since: since.UnixMilli()})
	return sqlbuild.Map(rows, func(r sqlitedb.ThroughputListRow) leasetype.ThroughputMinute {
		return sqlbuild.Minute(fromMillis(r.MinuteAt), r.Succeeded, r.Failed, r.Cancelled)
	}), err
}

func (t tables) PausedTypeInsert(ctx context.Context, taskType string) (bool, error) {
	return t.Changed(ctx, func() (int64, error) {
		return t.s.q.PausedTypeInsert(ctx, t.q, sqlitedb.PausedTypeInsertParams{TaskType: taskType})
	})
}

func (t tables) PausedTypeDelete(ctx context.Context, taskType string) (bool, error) {
	return t.Changed(ctx, func() (int64, error) {
		return t.s.q.PausedTypeDelete(ctx, t.q, sqlitedb.PausedTypeDeleteParams{TaskType: taskType})
	})
}

func (t tables) PausedTypeList(ctx context.Context) (map[string]time.Time, error) {
	rows, err := t.s.q.PausedTypeList(ctx, t.q)
	return sqlbuild.ToMap(rows, func(r sqlitedb.LeasegenPausedType) (string, time.Time) { return r.TaskType, fromMillis(r.PausedAt) }), err
}
