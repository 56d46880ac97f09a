package leasemysql

import (
	"context"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/driver/leasemysql/internal/mysqldb"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

func (t tables) ThroughputLastCounted(ctx context.Context) (time.Time, error) {
	return t.s.q.ThroughputLastCounted(ctx, t.q)
}

func (t tables) ThroughputCount(ctx context.Context, from, to time.Time) ([]driver.FinishedGroup, error) {
	rows, err := t.s.q.ThroughputCount(ctx, t.q, mysqldb.ThroughputCountParams{FromAt: from, ToAt: to})
	return sqlbuild.Map(rows, func(r mysqldb.ThroughputCountRow) driver.FinishedGroup {
		return driver.FinishedGroup{Type: r.TaskType, Status: leasetype.Status(r.Status), Minute: r.Minute, Tasks: r.Tasks}
	}), err
}

func (t tables) ThroughputInsert(ctx context.Context, r driver.MinuteRow) error {
	return t.Write(ctx, func() error {
		return t.s.q.ThroughputInsert(ctx, t.q, mysqldb.ThroughputInsertParams{
			TaskType: r.Type, MinuteAt: r.Minute, Succeeded: r.Succeeded, Failed: r.Failed, Cancelled: r.Cancelled,
		})
	})
}

func (t tables) ThroughputTrim(ctx context.Context, before time.Time) error {
	return t.Write(ctx, func() error { return t.s.q.ThroughputTrim(ctx, t.q, mysqldb.ThroughputTrimParams{Before: before}) })
}

func (t tables) ThroughputList(ctx context.Context, since time.Time) ([]leasetype.ThroughputMinute, error) {
	rows, err := t.s.q.ThroughputList(ctx, t.q, mysqldb.ThroughputListParams{Since: since})
	return sqlbuild.Map(rows, func(r mysqldb.ThroughputListRow) leasetype.ThroughputMinute {
		return sqlbuild.Minute(r.MinuteAt, r.Succeeded, r.Failed, r.Cancelled)
	}), err
}

func (t tables) PausedTypeInsert(ctx context.Context, taskType string) (bool, error) {
	return t.Changed(ctx, func() (int64, error) {
		return t.s.q.PausedTypeInsert(ctx, t.q, mysqldb.PausedTypeInsertParams{TaskType: taskType})
	})
}

func (t tables) PausedTypeDelete(ctx context.Context, taskType string) (bool, error) {
	return t.Changed(ctx, func() (int64, error) {
		return t.s.q.PausedTypeDelete(ctx, t.q, mysqldb.PausedTypeDeleteParams{TaskType: taskType})
	})
}

func (t tables) PausedTypeList(ctx context.Context) (map[string]time.Time, error) {
	rows, err := t.s.q.PausedTypeList(ctx, t.q)
	return sqlbuild.ToMap(rows, func(r mysqldb.LeasegenPausedType) (string, time.Time) { return r.TaskType, r.PausedAt }), err
}
