package runtime

import (
	"context"
	"database/sql"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
)

// Helpers both engines' stores use.

// nullString is s as a nullable column: NULL when empty.
func nullString(s string) sql.NullString {
	return sql.NullString{String: s, Valid: s != ""}
}

// withRetry runs op, again after an error that conflict accepts (a
// deadlock, a lock wait that timed out), up to three times. Only for
// operations that own their transaction.
func withRetry(ctx context.Context, conflict func(error) bool, onRetry func(), op func() error) error {
	var err error
	for try := range 3 {
		if err = op(); err == nil || !conflict(err) || try == 2 {
			return err
		}
		onRetry()
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(try+1) * 5 * time.Millisecond):
		}
	}
	return err
}

// recoveryOutcome mirrors the CASE of both engines' TaskRecoverMark.
func recoveryOutcome(status Status, attempt, free, maxAttempts int) string {
	switch {
	case status == StatusCancelRequested:
		return driver.RecoveryCancelled
	case driver.AttemptsLeft(attempt, free, maxAttempts):
		return driver.RecoveryRequeued
	default:
		return driver.RecoveryFailed
	}
}
