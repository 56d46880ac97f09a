package runtime

import (
	"context"
	"errors"
	"time"
	"unicode/utf8"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/internal/bookkeeping"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// AttemptInfo is one attempt of a task (TaskInfo.Attempts).
type AttemptInfo = leasetype.AttemptInfo

// maxAttemptError bounds an attempt's error text in the history.
const maxAttemptError = 2048

// keepAll, as RecordAttempts' keep, trims nothing.
const keepAll = 1 << 30

// remember stores e's attempt, which ended without ending its task, in
// the task's history. A failure is logged and otherwise ignored: the
// history is for people, the task's state is already written.
func (e *execution) remember(ctx context.Context, outcome, errText string) {
	rec := driver.AttemptRecord{TaskID: e.ref.ID, Attempt: e.ref.Attempt, Worker: e.w.cfg.WorkerID, StartedAt: e.claimedAt,
		Outcome: outcome, Error: truncateUTF8(errText, maxAttemptError), Duration: e.ran}
	if err := bookkeeping.RecordAttempts(ctx, e.w.engine.tables, []driver.AttemptRecord{rec}, e.w.cfg.AttemptHistory); err != nil {
		e.w.cfg.Logger.Warn("leasegen: recording an attempt in the task's history failed", e.logAttrs("err", err)...)
	}
}

// failureOutcome names, for the history, an attempt that failed with cause
// as its context's cause.
func (e *execution) failureOutcome(cause error) string {
	switch {
	case e.panicked:
		return leasetype.AttemptPanic
	case errors.Is(cause, ErrExecutionTimeout):
		return leasetype.AttemptTimedOut
	}
	return leasetype.AttemptError
}

// truncateUTF8 cuts s to at most n bytes, on a character boundary.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// history is a task's attempts: the recorded ones and, from the task's row,
// its latest when the records do not hold it (the one that ended the task,
// or runs now).
func history(info TaskInfo, recorded []AttemptInfo) []AttemptInfo {
	if len(recorded) == 0 {
		recorded = nil // a task never claimed has no history
	}
	if info.Attempt == 0 || (len(recorded) > 0 && recorded[len(recorded)-1].Attempt >= info.Attempt) {
		return recorded
	}
	last := AttemptInfo{Attempt: info.Attempt, Worker: info.LeaseOwner, StartedAt: info.StartedAt, FinishedAt: info.FinishedAt}
	switch info.Status {
	case StatusRunning, StatusCancelRequested:
		last.Outcome, last.FinishedAt = leasetype.AttemptRunning, time.Time{}
	case StatusSuccess:
		last.Outcome = leasetype.AttemptSuccess
	case StatusFailed:
		last.Outcome, last.Error = leasetype.AttemptFailed, info.LastError
	case StatusCancelled:
		last.Outcome, last.Error = leasetype.AttemptCancelled, info.LastError
	default:
		return recorded // queued again, its last attempt not recorded
	}
	if !last.FinishedAt.IsZero() && !last.StartedAt.IsZero() {
		last.Duration = last.FinishedAt.Sub(last.StartedAt)
	}
	return append(recorded, last)
}
