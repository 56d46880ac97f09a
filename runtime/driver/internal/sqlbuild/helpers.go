package sqlbuild

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// Helpers both engines' stores use.

// NullString is s as a nullable column: NULL when empty.
func NullString(s string) sql.NullString {
	return sql.NullString{String: s, Valid: s != ""}
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

// SetPaused runs pause (or resume when paused is false) under retry and
// reports whether it changed a row: the part of Driver.SetPaused that no
// engine writes differently.
func SetPaused(ctx context.Context, retry func(context.Context, func() error) error, taskType string, paused bool,
	pause, resume func() (int64, error)) (bool, error) {
	var n int64
	err := retry(ctx, func() error {
		var err error
		if paused {
			n, err = pause()
		} else {
			n, err = resume()
		}
		return err
	})
	if err != nil {
		return false, fmt.Errorf("leasegen: pause or resume %s: %w", taskType, err)
	}
	return n > 0, nil
}

// PausedTypes maps each paused type of rows to when it was paused.
func PausedTypes[R any](rows []R, err error, row func(R) (string, time.Time)) (map[string]time.Time, error) {
	if err != nil {
		return nil, fmt.Errorf("leasegen: list paused task types: %w", err)
	}
	paused := make(map[string]time.Time, len(rows))
	for _, r := range rows {
		typ, at := row(r)
		paused[typ] = at
	}
	return paused, nil
}
