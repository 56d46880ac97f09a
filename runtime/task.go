package runtime

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/leasegen/leasegen/runtime/leasetype"
)

// The types drivers and users share live in leasetype; these aliases keep
// them in runtime's API.
type (
	// TaskID identifies a task. It is the task row's primary key.
	TaskID = leasetype.TaskID
	// Status is a task's state in the lease protocol.
	Status = leasetype.Status
	// TaskInfo is a stored task as a client reads it.
	TaskInfo = leasetype.TaskInfo
)

// The task states. SUCCESS, FAILED and CANCELLED are terminal.
const (
	StatusWaiting         = leasetype.StatusWaiting // a keyed task waiting for a slot of its key
	StatusQueued          = leasetype.StatusQueued
	StatusRunning         = leasetype.StatusRunning
	StatusSuccess         = leasetype.StatusSuccess
	StatusFailed          = leasetype.StatusFailed
	StatusCancelRequested = leasetype.StatusCancelRequested
	StatusCancelled       = leasetype.StatusCancelled
)

// AllStatuses lists every status, in lifecycle order.
var AllStatuses = leasetype.AllStatuses

// Task is one execution of a task, as its handler sees it.
type Task struct {
	ID             TaskID
	Type           string
	Attempt        int // the fencing token: rises with every claim
	MaxAttempts    int
	Priority       int
	OwnerID        string
	IdempotencyKey string
	ConcurrencyKey string // WithConcurrencyKey's, WithSequentialKey's or WithKeyRate's; empty for none
	// StartedAt is when the claim started this attempt, on the database's
	// clock: the instant rate limits count.
	StartedAt time.Time
	Payload   []byte
	// Metadata is what the enqueue attached (WithMetadata, enqueue
	// middleware such as a trace context); nil when nothing.
	Metadata map[string]string

	exec *execution // nil outside a worker
}

// SetResult records what a successful execution produced (for example an
// artifact id). It is stored when the task completes; a result longer than
// MaxResultBytes fails the task for good with ErrResultTooLarge instead.
func (t *Task) SetResult(result string) {
	if t.exec != nil {
		t.exec.setResult(result)
	}
}

// CompleteTx marks the task SUCCESS inside tx, fenced on this execution's
// lease: the caller's writes in tx and the completion commit together or not
// at all. It returns ErrLeaseLost when the lease is no longer held, in which
// case the caller must roll tx back. After a successful CompleteTx and
// commit, the handler's return value is ignored.
//
// The transaction is the caller's, so leasegen sets no bound on its
// session: a worker cut off from the database between CompleteTx and the
// commit leaves the task's row locked until the server ends the session
// (MySQL's wait_timeout, PostgreSQL's idle_in_transaction_session_timeout,
// TCP keepalives), and lease recovery passes the task over until then.
// RunIdempotent bounds that to the lease and a second; so can the caller,
// with those settings on the connections it commits through.
func (t *Task) CompleteTx(ctx context.Context, tx *sql.Tx) error {
	if t.exec == nil {
		return fmt.Errorf("%w: CompleteTx called outside a worker", ErrInvalidTask)
	}
	return t.exec.completeTx(ctx, tx)
}

// EncodePayload encodes a payload for Enqueue.
func EncodePayload(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%w: encode payload: %v", ErrInvalidTask, err)
	}
	return b, nil
}

// DecodePayload decodes t's payload into v. A payload that does not decode
// fails the task permanently: retrying cannot fix it.
func DecodePayload(t *Task, v any) error {
	if err := json.Unmarshal(t.Payload, v); err != nil {
		return Permanent(fmt.Errorf("decode %s payload of task %d: %w", t.Type, t.ID, err))
	}
	return nil
}

// RunIdempotent runs fn in a transaction that also completes t, fenced on
// this execution's lease: fn's writes and the completion commit together or
// not at all. With a non-empty key it first records the key for t's type in
// the same transaction; when a committed task already recorded it, fn is
// skipped and t completes without doing the work again, with the result
// of the task that did it (a typed result reads back the same from
// either), or "skipped: task N already did the work of idempotency key K"
// when that task set none or is gone, unless the handler set one. When
// ctx ends before the commit, the error says why: errors.Is(err,
// ErrLeaseLost) after a lost lease.
func RunIdempotent(ctx context.Context, t *Task, key string, fn func(ctx context.Context, tx *sql.Tx) error) (err error) {
	defer func() { err = withCause(ctx, err) }()
	if t.exec == nil {
		return fmt.Errorf("%w: RunIdempotent called outside a worker", ErrInvalidTask)
	}
	if len(key) > maxKeyLen {
		return Permanent(fmt.Errorf("%w: %s idempotency key is %d bytes, the limit is %d", ErrInvalidTask, t.Type, len(key), maxKeyLen))
	}
	d := t.exec.x.driver
	tx, done, err := d.BeginExecutionTx(ctx, t.exec.lease)
	if err != nil {
		return err
	}
	defer done()
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	holder := t.ID
	if key != "" {
		if holder, err = d.RecordKey(ctx, tx, t.Type, key, t.ID); err != nil {
			return err
		}
	}
	if holder == t.ID {
		if err := fn(ctx, tx); err != nil {
			return err
		}
	} else if t.exec.resultValue() == "" {
		t.SetResult(heldResult(ctx, t, holder, key))
	}
	if err := t.CompleteTx(ctx, tx); err != nil {
		return err
	}
	return tx.Commit()
}

// heldResult is the result of a task whose key holder did the work: the
// holder's result, so that a caller waiting for either reads the same,
// or, when the holder set none or is gone, a line naming it.
func heldResult(ctx context.Context, t *Task, holder TaskID, key string) string {
	if info, err := t.exec.x.tables.TaskGet(ctx, holder); err == nil && info.Result != "" {
		return info.Result
	}
	return fmt.Sprintf("skipped: task %d already did the work of idempotency key %q", holder, key)
}

// withCause names why ctx ended in an error that came after it did: a
// statement that a lost lease cut short reports ErrLeaseLost (and a
// stopping worker its own cause), not only the driver's "context
// canceled". errors.Is still finds the original error.
func withCause(ctx context.Context, err error) error {
	if err == nil || ctx.Err() == nil {
		return err
	}
	cause := context.Cause(ctx)
	if errors.Is(err, cause) {
		return err
	}
	return fmt.Errorf("%w: %w", cause, err)
}
