package systemtest

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime"
)

// A result of MaxResultBytes fits every engine's column and reads back
// whole; one byte more fails the task for good, with ErrResultTooLarge in
// its last error, on the first attempt, in the plain and in the
// idempotent path; a typed result (SetResultJSON) comes back typed from
// WaitResult, which reports a failed task and a task of another type; a
// task that skipped its key's work returns the result of the one that
// did it.
func testResults(t *testing.T, b *Bundle) {
	type report struct {
		Rows  int      `json:"rows"`
		Files []string `json:"files"`
	}
	b.DB.MustExec(t, EffectsTable)
	b.StartWorker(t, Config(), map[string]runtime.HandlerFunc{
		"fits": func(_ context.Context, task *runtime.Task) error {
			task.SetResult(strings.Repeat("r", runtime.MaxResultBytes))
			return nil
		},
		"too-long": func(_ context.Context, task *runtime.Task) error {
			task.SetResult(strings.Repeat("r", runtime.MaxResultBytes+1))
			return nil
		},
		"too-long-tx": func(ctx context.Context, task *runtime.Task) error {
			return runtime.RunIdempotent(ctx, task, "k", func(ctx context.Context, tx *sql.Tx) error {
				task.SetResult(strings.Repeat("r", runtime.MaxResultBytes+1))
				_, err := tx.ExecContext(ctx, b.H.SQL("INSERT INTO effects (task_id, attempt, owner) VALUES (?, ?, 'w')"), task.ID, task.Attempt)
				return err
			})
		},
		"typed": func(_ context.Context, task *runtime.Task) error {
			return task.SetResultJSON(report{Rows: 3, Files: []string{"a.csv", "b.csv"}})
		},
		"charge": func(ctx context.Context, task *runtime.Task) error {
			return runtime.RunIdempotent(ctx, task, "order-1", func(context.Context, *sql.Tx) error {
				return task.SetResultJSON(report{Rows: int(task.ID)})
			})
		},
		"fails": func(context.Context, *runtime.Task) error {
			return runtime.Permanent(errors.New("no such file"))
		},
	})
	fits := b.Enqueue(t, "fits")
	if info := b.WaitStatus(t, fits, runtime.StatusSuccess); len(info.Result) != runtime.MaxResultBytes || strings.Trim(info.Result, "r") != "" {
		t.Errorf("a result of MaxResultBytes came back as %d bytes", len(info.Result))
	}
	for _, typ := range []string{"too-long", "too-long-tx"} {
		id := b.Enqueue(t, typ, runtime.WithMaxAttempts(3))
		info := b.WaitStatus(t, id, runtime.StatusFailed)
		if info.AttemptsUsed != 1 || info.Result != "" || !strings.Contains(info.LastError, runtime.ErrResultTooLarge.Error()) {
			t.Errorf("%s: %s after %d attempts, result of %d bytes, last error %q; want FAILED after one, no result, ErrResultTooLarge",
				typ, info.Status, info.AttemptsUsed, len(info.Result), info.LastError)
		}
	}
	if n := b.DB.Int(t, "SELECT COUNT(*) FROM effects"); n != 0 {
		t.Errorf("the idempotent handler's writes with a result too long: %d rows, want none (rolled back)", n)
	}

	typed := b.Enqueue(t, "typed")
	got, err := runtime.WaitResult[report](bg, b.Client, "typed", typed)
	if err != nil || got.Rows != 3 || strings.Join(got.Files, ",") != "a.csv,b.csv" {
		t.Errorf("WaitResult = %+v, %v; want the handler's report", got, err)
	}
	if _, err := runtime.WaitResult[report](bg, b.Client, "other", typed); !errors.Is(err, runtime.ErrInvalidTask) {
		t.Errorf("WaitResult of another type: %v, want ErrInvalidTask", err)
	}
	// A task that skips the work of its key's holder returns the holder's
	// result.
	charged := b.Enqueue(t, "charge")
	first, err := runtime.WaitResult[report](bg, b.Client, "charge", charged)
	dbtest.Must(t, "wait for the charge", err)
	again, err := runtime.WaitResult[report](bg, b.Client, "charge", b.Enqueue(t, "charge"))
	if err != nil || first.Rows != int(charged) || again.Rows != first.Rows {
		t.Errorf("the charge that skipped its key's work returned %+v, %v; want the first one's %+v", again, err, first)
	}

	failed := b.Enqueue(t, "fails")
	var ended *runtime.TaskEndedError
	if _, err := runtime.WaitResult[report](bg, b.Client, "fails", failed); !errors.As(err, &ended) ||
		!errors.Is(err, runtime.ErrTaskNotSucceeded) || ended.Task.Status != runtime.StatusFailed || !strings.Contains(ended.Task.LastError, "no such file") {
		t.Errorf("WaitResult of a failed task: %v, want a TaskEndedError with the task FAILED and its error", err)
	}
}
