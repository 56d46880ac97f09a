package sqlbuild

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// Helpers both engines' stores use.

// NullString is s as a nullable column: NULL when empty.
func NullString(s string) sql.NullString {
	return sql.NullString{String: s, Valid: s != ""}
}

// NullStrings is ss as arguments of a nullable column.
func NullStrings(ss []string) []sql.NullString {
	out := make([]sql.NullString, len(ss))
	for i, s := range ss {
		out[i] = NullString(s)
	}
	return out
}

// NullBytes is a nullable text column's bytes, nil for NULL.
func NullBytes(s sql.NullString) []byte {
	if !s.Valid {
		return nil
	}
	return []byte(s.String)
}

// WithRetry runs op, again after an error that conflict accepts (a
// deadlock, a lock wait that timed out), up to three times. Only for
// operations that own their transaction.
func WithRetry(ctx context.Context, conflict func(error) bool, onRetry func(), op func() error) error {
	var err error
	for try := range 3 {
		if err = op(); err == nil || !conflict(err) || try == 2 {
			return err
		}
		if onRetry != nil {
			onRetry()
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(try+1) * 5 * time.Millisecond):
		}
	}
	return err
}

// RecoveryOutcome mirrors the CASE of both engines' TaskRecoverMark.
func RecoveryOutcome(status leasetype.Status, attempt, free, maxAttempts int) string {
	switch {
	case status == leasetype.StatusCancelRequested:
		return driver.RecoveryCancelled
	case driver.AttemptsLeft(attempt, free, maxAttempts):
		return driver.RecoveryRequeued
	default:
		return driver.RecoveryFailed
	}
}

// EncodeLimits is TaskLimits as the task_limits column holds it.
func EncodeLimits(limits map[string]int) string {
	b, _ := json.Marshal(limits) // a map of strings to ints always encodes
	return string(b)
}

// DecodeLimits reads the task_limits column; a value no worker wrote reads
// as no types.
func DecodeLimits(s string) map[string]int {
	limits := map[string]int{}
	_ = json.Unmarshal([]byte(s), &limits)
	return limits
}

// Writes runs the writing statements of an engine's driver.Tables: on the
// pool each through Retry (the engine's conflict handling), and once in a
// transaction (InTx), which is retried whole.
type Writes struct {
	Retry func(ctx context.Context, op func() error) error
	InTx  bool // bound to a transaction
}

// Write runs one writing statement.
func (w Writes) Write(ctx context.Context, op func() error) error {
	if w.InTx {
		return op()
	}
	return w.Retry(ctx, op)
}

// Changed runs a writing statement that returns the rows it changed and
// reports whether it changed any.
func (w Writes) Changed(ctx context.Context, op func() (int64, error)) (bool, error) {
	n, err := w.Count(ctx, op)
	return n > 0, err
}

// Count runs a writing statement that returns the rows it changed.
func (w Writes) Count(ctx context.Context, op func() (int64, error)) (int, error) {
	var n int64
	err := w.Write(ctx, func() (err error) {
		n, err = op()
		return err
	})
	return int(n), err
}

// AppliedMigrations reads leasegen_schema_migrations on q: each applied
// version and when, its applied_at column scanned as T and read by at.
func AppliedMigrations[T any](ctx context.Context, q driver.DBTX, at func(T) time.Time) (map[int]time.Time, error) {
	rows, err := q.QueryContext(ctx, "SELECT version, applied_at FROM leasegen_schema_migrations")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	applied := map[int]time.Time{}
	for rows.Next() {
		var v int
		var when T
		if err := rows.Scan(&v, &when); err != nil {
			return nil, err
		}
		applied[v] = at(when)
	}
	return applied, rows.Err()
}
