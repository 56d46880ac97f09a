package runtime

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
)

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
// "skipped: task N already did the work of idempotency key K" unless the
// handler set one.
func RunIdempotent(ctx context.Context, t *Task, key string, fn func(ctx context.Context, tx *sql.Tx) error) error {
	if t.exec == nil {
		return fmt.Errorf("%w: RunIdempotent called outside a worker", ErrInvalidTask)
	}
	if len(key) > maxKeyLen {
		return Permanent(fmt.Errorf("%w: %s idempotency key is %d bytes, the limit is %d", ErrInvalidTask, t.Type, len(key), maxKeyLen))
	}
	engine := t.exec.w.engine
	tx, done, err := engine.driver.BeginExecutionTx(ctx, t.exec.lease)
	if err != nil {
		return err
	}
	defer done()
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	holder := t.ID
	if key != "" {
		if holder, err = engine.driver.RecordKey(ctx, tx, t.Type, key, t.ID); err != nil {
			return err
		}
	}
	if holder == t.ID {
		if err := fn(ctx, tx); err != nil {
			return err
		}
	} else if t.exec.resultValue() == "" {
		t.SetResult(fmt.Sprintf("skipped: task %d already did the work of idempotency key %q", holder, key))
	}
	if err := t.CompleteTx(ctx, tx); err != nil {
		return err
	}
	return tx.Commit()
}
