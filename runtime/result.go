package runtime

import (
	"context"
	"encoding/json"
	"fmt"
)

// MaxResultBytes bounds a task's result: what every engine's result column
// holds (MySQL's TEXT). A longer result fails the task for good with
// ErrResultTooLarge instead of completing it.
const MaxResultBytes = 65_535

// resultTooLarge is the error of a result of n bytes.
func resultTooLarge(taskType string, n int) error {
	return Permanent(fmt.Errorf("%w: %s result is %d bytes, the limit is %d; store it elsewhere and return its id",
		ErrResultTooLarge, taskType, n, MaxResultBytes))
}

// SetResultJSON stores v, encoded as JSON, as the task's result, as
// SetResult does; the generated handler adapters call it with a typed
// handler's result. It returns an error, permanent, when v does not
// encode or its encoding is longer than MaxResultBytes.
func (t *Task) SetResultJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return Permanent(fmt.Errorf("leasegen: %s result does not encode as JSON: %w", t.Type, err))
	}
	if len(b) > MaxResultBytes {
		return resultTooLarge(t.Type, len(b))
	}
	t.SetResult(string(b))
	return nil
}

// TaskEndedError is WaitResult's error for a task that ended without
// succeeding; errors.Is(err, ErrTaskNotSucceeded) holds.
type TaskEndedError struct {
	Task TaskInfo // the task as it ended, with its last error
}

func (e *TaskEndedError) Error() string {
	msg := fmt.Sprintf("leasegen: task %d (%s) ended %s", e.Task.ID, e.Task.Type, e.Task.Status)
	if e.Task.LastError != "" {
		msg += ": " + e.Task.LastError
	}
	return msg
}

// Unwrap makes errors.Is(err, ErrTaskNotSucceeded) hold.
func (e *TaskEndedError) Unwrap() error { return ErrTaskNotSucceeded }

// WaitResult waits, as Client.Wait does, until task id of type taskType
// is finished and returns its result decoded from JSON into an R: what
// the generated WaitX methods return. A task that ended FAILED or
// CANCELLED returns a *TaskEndedError; a task of another type or a result
// that does not decode into an R returns an error wrapping
// ErrInvalidTask.
func WaitResult[R any](ctx context.Context, c *Client, taskType string, id TaskID) (R, error) {
	var r R
	info, err := c.Wait(ctx, id)
	switch {
	case err != nil:
		return r, err
	case info.Type != taskType:
		return r, fmt.Errorf("%w: task %d is a %s task, not %s", ErrInvalidTask, id, info.Type, taskType)
	case info.Status != StatusSuccess:
		return r, &TaskEndedError{Task: info}
	}
	if err := json.Unmarshal([]byte(info.Result), &r); err != nil {
		return r, fmt.Errorf("%w: task %d's result does not decode into %T: %v", ErrInvalidTask, id, r, err)
	}
	return r, nil
}
