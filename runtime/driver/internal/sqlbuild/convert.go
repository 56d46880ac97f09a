package sqlbuild

import (
	"database/sql"
	"math"
	"time"

	"github.com/leasegen/leasegen/runtime/leasetype"
)

// Map converts an engine's rows.
func Map[R, T any](rows []R, f func(R) T) []T {
	out := make([]T, len(rows))
	for i, r := range rows {
		out[i] = f(r)
	}
	return out
}

// ToMap converts an engine's rows into a map.
func ToMap[R any, V any](rows []R, f func(R) (string, V)) map[string]V {
	out := make(map[string]V, len(rows))
	for _, r := range rows {
		k, v := f(r)
		out[k] = v
	}
	return out
}

// ToTaskID and FromTaskID convert a BIGINT id column.
func ToTaskID(id int64) leasetype.TaskID   { return leasetype.TaskID(id) }
func FromTaskID(id leasetype.TaskID) int64 { return int64(id) }

// Minute is a stored minute's totals.
func Minute(at time.Time, succeeded, failed, cancelled int64) leasetype.ThroughputMinute {
	return leasetype.ThroughputMinute{Minute: at.UTC(), Succeeded: int(succeeded), Failed: int(failed), Cancelled: int(cancelled)}
}

// NullTime is t, NULL for the zero time.
func NullTime(t time.Time) sql.NullTime { return sql.NullTime{Time: t, Valid: !t.IsZero()} }

// TimeOrNil is t as a statement argument, nil for the zero time.
func TimeOrNil(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

// MillisOrNil is t in Unix milliseconds as a statement argument, nil for
// the zero time.
func MillisOrNil(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMilli()
}

// First is the first of values, or T's zero value for none.
func First[T any](values []T) T {
	var zero T
	if len(values) == 0 {
		return zero
	}
	return values[0]
}

// NullID is a task id column's value, NULL for no task.
func NullID(id leasetype.TaskID) sql.NullInt64 {
	return sql.NullInt64{Int64: int64(id), Valid: id != 0}
}

// BoolInt is b as an INTEGER flag column holds it.
func BoolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// farFuture is later than any task's finish: the keyset of a first page.
var farFuture = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// FinishedKeyset is f's keyset as TaskListFinished's query takes it: a
// zero BeforeFinishedAt starts from the latest (the far future, below any
// id); a zero BeforeID with an instant, below any id at that instant.
func FinishedKeyset(f leasetype.FinishedFilter) (time.Time, int64) {
	if f.BeforeFinishedAt.IsZero() {
		return farFuture, math.MaxInt64
	}
	if f.BeforeID == 0 {
		return f.BeforeFinishedAt, math.MaxInt64
	}
	return f.BeforeFinishedAt, int64(f.BeforeID)
}

// IDs is ids as the engines' BIGINT arguments.
func IDs(ids []leasetype.TaskID) []int64 {
	out := make([]int64, len(ids))
	for i, id := range ids {
		out[i] = int64(id)
	}
	return out
}
