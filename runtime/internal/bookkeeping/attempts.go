package bookkeeping

import (
	"context"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// maxAttemptError bounds an attempt's error text in the history.
const maxAttemptError = 2048

// KeepAll, as RecordAttempts' keep, trims nothing.
const KeepAll = 1 << 30

// RecordAttempts stores recs, attempts that did not end their tasks (the
// attempt that ends a task is read from its row), ignoring one already
// stored, with its error cut to 2 KiB, and keeps only each task's latest
// keep attempts, counted from its newest recorded one: the records of a
// task's attempts are separate writes that may land out of order, and a
// late one of an old attempt is trimmed by its own trim. Each statement
// stands alone: a crash between an insert and its trim leaves a row more,
// which the next trim removes.
func RecordAttempts(ctx context.Context, t driver.Tables, recs []driver.AttemptRecord, keep int) error {
	for _, r := range recs {
		r.Error = truncateUTF8(r.Error, maxAttemptError)
		err := t.AttemptInsert(ctx, r)
		if err == nil && keep < KeepAll {
			// Relative to the newest recorded, so a record that comes
			// after a later attempt's (the writes are separate) goes too.
			err = t.AttemptTrim(ctx, r.TaskID, keep)
		}
		if err != nil {
			return fmt.Errorf("leasegen: record attempt %d of task %d: %w", r.Attempt, r.TaskID, err)
		}
	}
	return nil
}

// PurgeAttempts deletes the recorded attempts of up to batch tasks that
// no longer exist and returns how many attempts it deleted.
func PurgeAttempts(ctx context.Context, t driver.Tables, batch int) (int, error) {
	ids, err := t.AttemptOrphans(ctx, batch)
	if err != nil || len(ids) == 0 {
		return 0, wrapPurge(err)
	}
	n, err := t.AttemptDeleteTasks(ctx, ids)
	return n, wrapPurge(err)
}

func wrapPurge(err error) error {
	if err != nil {
		return fmt.Errorf("leasegen: purge the attempts of deleted tasks: %w", err)
	}
	return nil
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

// History is a task's attempts: the recorded ones and, from the task's row,
// its latest when the records do not hold it (the one that ended the task,
// or runs now).
func History(info leasetype.TaskInfo, recorded []leasetype.AttemptInfo) []leasetype.AttemptInfo {
	if len(recorded) == 0 {
		recorded = nil // a task never claimed has no history
	}
	if info.Attempt == 0 || (len(recorded) > 0 && recorded[len(recorded)-1].Attempt >= info.Attempt) {
		return recorded
	}
	last := leasetype.AttemptInfo{Attempt: info.Attempt, Worker: info.LeaseOwner, StartedAt: info.StartedAt, FinishedAt: info.FinishedAt}
	switch info.Status {
	case leasetype.StatusRunning, leasetype.StatusCancelRequested:
		last.Outcome, last.FinishedAt = leasetype.AttemptRunning, time.Time{}
	case leasetype.StatusSuccess:
		last.Outcome = leasetype.AttemptSuccess
	case leasetype.StatusFailed:
		last.Outcome, last.Error = leasetype.AttemptFailed, info.LastError
	case leasetype.StatusCancelled:
		last.Outcome, last.Error = leasetype.AttemptCancelled, info.LastError
	default:
		return recorded // queued again, its last attempt not recorded
	}
	if !last.FinishedAt.IsZero() && !last.StartedAt.IsZero() {
		last.Duration = last.FinishedAt.Sub(last.StartedAt)
	}
	return append(recorded, last)
}
