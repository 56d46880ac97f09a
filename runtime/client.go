package runtime

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/internal/bookkeeping"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// Limits on what a task row can hold; enqueue rejects anything longer.
const (
	maxTaskTypeLen   = 128
	maxOwnerIDLen    = 255
	maxKeyLen        = 255
	maxFlowKeyLen    = 255 // in bytes: flow_key holds 255 characters
	maxLeaseOwnerLen = 64  // lease_owner is CHAR(64) ASCII, so claims update rows in place
)

// defaultMaxAttempts is ClientConfig.DefaultMaxAttempts's default, and a
// schedule's.
const defaultMaxAttempts = 5

// ClientConfig configures a Client. Zero fields take their defaults.
type ClientConfig struct {
	// MaxPayloadBytes bounds an encoded payload. Default 1 MiB; at most
	// 8 MiB. A MySQL server may take less: half its max_allowed_packet
	// less 64 KiB (escaping can double a payload), 8,323,072 bytes on
	// MariaDB's default of 16 MiB; a larger payload is ErrPayloadTooLarge
	// at the enqueue, naming the server's limit.
	MaxPayloadBytes int
	// DefaultMaxAttempts applies when an enqueue does not set one. Default 5.
	DefaultMaxAttempts int
	// EnqueueMiddleware wraps every enqueue of the client, the first
	// listed outermost, in a transaction or not.
	EnqueueMiddleware []EnqueueMiddleware
}

// EnqueueFunc stores requests, atomically, and returns their ids in order.
type EnqueueFunc func(ctx context.Context, reqs []Request) ([]TaskID, error)

// EnqueueMiddleware wraps a client's enqueues (ClientConfig.EnqueueMiddleware):
// it sees each batch of requests before they are stored, may change them
// (add options) or fail the enqueue, and sees the ids they got.
type EnqueueMiddleware func(next EnqueueFunc) EnqueueFunc

const maxPayloadCeiling = 8 << 20

// Client enqueues tasks and reads or cancels them.
type Client struct {
	engine *Engine
	cfg    ClientConfig
}

// Request is one task to enqueue: its type, its encoded payload and options.
type Request struct {
	Type    string
	Payload []byte
	Options []EnqueueOption
}

// NewClient returns a client of engine.
func NewClient(engine *Engine, cfg ClientConfig) (*Client, error) {
	if cfg.MaxPayloadBytes == 0 {
		cfg.MaxPayloadBytes = 1 << 20
	}
	if cfg.DefaultMaxAttempts == 0 {
		cfg.DefaultMaxAttempts = defaultMaxAttempts
	}
	if cfg.MaxPayloadBytes < 0 || cfg.MaxPayloadBytes > maxPayloadCeiling {
		return nil, configError("MaxPayloadBytes", fmt.Sprintf("must be in 1..%d", maxPayloadCeiling), cfg.MaxPayloadBytes)
	}
	if cfg.DefaultMaxAttempts < 0 {
		return nil, configError("DefaultMaxAttempts", "must be > 0", cfg.DefaultMaxAttempts)
	}
	return &Client{engine: engine, cfg: cfg}, nil
}

// Enqueue stores one task and returns its id. The payload is JSON (what
// the generated handlers decode); nil stores {}.
func (c *Client) Enqueue(ctx context.Context, taskType string, payload []byte, opts ...EnqueueOption) (TaskID, error) {
	return c.EnqueueRequest(ctx, Request{Type: taskType, Payload: payload, Options: opts})
}

// EnqueueRequest is Enqueue of a prepared request (the generated enqueue
// methods build one).
func (c *Client) EnqueueRequest(ctx context.Context, req Request) (TaskID, error) {
	return first(c.EnqueueMany(ctx, []Request{req}))
}

// EnqueueTx stores one task inside the caller's transaction: it becomes
// visible to workers when tx commits, and vanishes if tx rolls back.
func (c *Client) EnqueueTx(ctx context.Context, tx *sql.Tx, taskType string, payload []byte, opts ...EnqueueOption) (TaskID, error) {
	return c.EnqueueRequestTx(ctx, tx, Request{Type: taskType, Payload: payload, Options: opts})
}

// EnqueueRequestTx is EnqueueTx of a prepared request.
func (c *Client) EnqueueRequestTx(ctx context.Context, tx *sql.Tx, req Request) (TaskID, error) {
	return first(c.EnqueueManyTx(ctx, tx, []Request{req}))
}

// first is the id of a one-request enqueue.
func first(ids []TaskID, err error) (TaskID, error) {
	if err != nil {
		return 0, err
	}
	return ids[0], nil
}

// EnqueueMany stores all requests atomically, in as few statements as the
// server allows (one per 1,000 rows on MariaDB), and returns their ids in
// order.
func (c *Client) EnqueueMany(ctx context.Context, reqs []Request) ([]TaskID, error) {
	ids, err := c.enqueue(ctx, c.engine.db, reqs)
	if err != nil {
		return nil, err
	}
	notified := make(map[string]bool, 1) // a batch is mostly of one type
	for _, r := range reqs {
		if !notified[r.Type] {
			notified[r.Type] = true
			c.engine.driver.Notify(r.Type)
		}
	}
	return ids, nil
}

// EnqueueManyTx is EnqueueMany inside the caller's transaction.
func (c *Client) EnqueueManyTx(ctx context.Context, tx *sql.Tx, reqs []Request) ([]TaskID, error) {
	return c.enqueue(ctx, tx, reqs)
}

// enqueue stores reqs on q through the client's middleware.
func (c *Client) enqueue(ctx context.Context, q driver.DBTX, reqs []Request) ([]TaskID, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	return c.chain(func(ctx context.Context, reqs []Request) ([]TaskID, error) { return c.store(ctx, q, reqs) })(ctx, reqs)
}

// chain wraps store in the client's middleware.
func (c *Client) chain(store EnqueueFunc) EnqueueFunc {
	next := store
	for _, mw := range slices.Backward(c.cfg.EnqueueMiddleware) {
		next = mw(next)
	}
	return next
}

// store validates reqs and inserts them on q.
func (c *Client) store(ctx context.Context, q driver.DBTX, reqs []Request) ([]TaskID, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	tasks := make([]driver.NewTask, len(reqs))
	var keys []driver.FlowKey // nil unless a task has a concurrency key
	for i, r := range reqs {
		t, key, err := c.newTask(r)
		if err != nil {
			return nil, err
		}
		tasks[i] = t
		if key.Key != "" && keys == nil {
			keys = make([]driver.FlowKey, len(reqs))
		}
		if keys != nil {
			keys[i] = key
		}
	}
	if err := c.checkBeforeInsert(ctx, tasks); err != nil {
		return nil, err
	}
	var ids []TaskID
	var err error
	if keys != nil {
		ids, err = c.insertKeyed(ctx, q, bookkeeping.KeyedBatch{Tasks: tasks, Keys: keys})
	} else {
		ids, err = c.engine.driver.Insert(ctx, q, tasks)
	}
	if err != nil {
		return nil, c.engine.classifyWrite(err)
	}
	c.countEnqueued(tasks)
	return ids, nil
}

// checkBeforeInsert checks, before tasks are sent, that ctx is live, the
// connection's settings are safe and each payload fits in the server's
// row.
func (c *Client) checkBeforeInsert(ctx context.Context, tasks []driver.NewTask) error {
	if err := ctx.Err(); err != nil {
		return err // nothing sent
	}
	if err := c.engine.driver.Check(ctx); err != nil {
		return c.engine.classify(err)
	}
	if limit := c.engine.driver.PayloadLimit(); limit > 0 {
		for _, t := range tasks {
			if len(t.Payload) > limit {
				return fmt.Errorf("%w: %s payload is %d bytes; the server takes at most %d in a row (half its max_allowed_packet less 64 KiB: escaping can double a payload)",
					ErrPayloadTooLarge, t.Type, len(t.Payload), limit)
			}
		}
	}
	return nil
}

// countEnqueued reports stored tasks to the observer, a count per run of
// one type.
func (c *Client) countEnqueued(tasks []driver.NewTask) {
	for i := 0; i < len(tasks); {
		j := i + 1
		for j < len(tasks) && tasks[j].Type == tasks[i].Type {
			j++
		}
		c.engine.observer.TasksEnqueued(tasks[i].Type, j-i)
		i = j
	}
}

// newTask applies r's options and checks every bound of the task row; it
// returns the task's concurrency key too, the zero FlowKey for none.
func (c *Client) newTask(r Request) (driver.NewTask, driver.FlowKey, error) {
	o := enqueueOptions{maxAttempts: c.cfg.DefaultMaxAttempts}
	for _, opt := range r.Options {
		opt(&o)
	}
	if err := checkTaskType(r.Type); err != nil {
		return driver.NewTask{}, driver.FlowKey{}, err
	}
	switch {
	case len(r.Payload) > c.cfg.MaxPayloadBytes:
		return driver.NewTask{}, driver.FlowKey{}, fmt.Errorf("%w: %s payload is %d bytes, the limit is %d (ClientConfig.MaxPayloadBytes)", ErrPayloadTooLarge, r.Type, len(r.Payload), c.cfg.MaxPayloadBytes)
	case len(o.ownerID) > maxOwnerIDLen:
		return driver.NewTask{}, driver.FlowKey{}, fmt.Errorf("%w: %s owner id is %d bytes, the limit is %d", ErrInvalidTask, r.Type, len(o.ownerID), maxOwnerIDLen)
	case len(o.key) > maxKeyLen:
		return driver.NewTask{}, driver.FlowKey{}, fmt.Errorf("%w: %s idempotency key is %d bytes, the limit is %d", ErrInvalidTask, r.Type, len(o.key), maxKeyLen)
	case o.maxAttempts < 1 || o.maxAttempts > math.MaxInt32:
		return driver.NewTask{}, driver.FlowKey{}, fmt.Errorf("%w: %s max attempts must be in 1..%d, got %d", ErrInvalidTask, r.Type, math.MaxInt32, o.maxAttempts)
	case o.delay < 0 || o.delay > maxDelay:
		return driver.NewTask{}, driver.FlowKey{}, fmt.Errorf("%w: %s delay must be in 0..%s, got %s", ErrInvalidTask, r.Type, maxDelay, o.delay)
	}
	if err := cmp.Or(checkRow(r.Type, o), checkFlowKey(r.Type, o)); err != nil {
		return driver.NewTask{}, driver.FlowKey{}, err
	}
	metadata := leasetype.EncodeMetadata(o.metadata)
	if len(metadata) > maxMetadataBytes {
		return driver.NewTask{}, driver.FlowKey{}, fmt.Errorf("%w: %s metadata is %d bytes as JSON, the limit is %d", ErrInvalidTask, r.Type, len(metadata), maxMetadataBytes)
	}
	payload := r.Payload
	switch {
	case payload == nil:
		payload = []byte("{}")
	case !json.Valid(payload):
		return driver.NewTask{}, driver.FlowKey{}, fmt.Errorf("%w: %s payload is not JSON (%s): encode it with json.Marshal; bytes go in a JSON string, base64",
			ErrInvalidTask, r.Type, preview(payload))
	}
	return driver.NewTask{
		Type:        r.Type,
		Payload:     payload,
		Priority:    o.priority,
		RunAt:       o.runAt,
		Delay:       o.delay,
		MaxAttempts: o.maxAttempts,
		OwnerID:     o.ownerID,
		Key:         o.key,
		Metadata:    metadata,
	}, o.flowKeyOf(r.Type), nil
}

// Get returns the task with id, or ErrTaskNotFound.
func (c *Client) Get(ctx context.Context, id TaskID) (TaskInfo, error) {
	info, err := c.engine.tables.TaskGet(ctx, id)
	if err != nil {
		return info, c.engine.failed(err, "get task %d", id)
	}
	recorded, err := c.engine.tables.AttemptList(ctx, id)
	if err != nil {
		return info, c.engine.failed(err, "read task %d's attempts", id)
	}
	info.Attempts = bookkeeping.History(info, recorded)
	if info.WorkKey, err = c.engine.tables.IdempotencyKeyOfTask(ctx, id); err != nil {
		return info, c.engine.failed(err, "read task %d's work key", id)
	}
	return info, nil
}

// Waits of Client.Wait: the first after one read, doubling up to the last.
const (
	firstWait = 10 * time.Millisecond
	lastWait  = time.Second
)

// Wait blocks until task id is finished (SUCCESS, FAILED or CANCELLED) and
// returns it as Get does, with its result or last error and its history.
// Each round reads the task's row once, by its primary key, and the rounds
// back off from 10 ms to 1 s. When ctx ends first, Wait returns the task
// as it last read it and ctx's error; a task that does not exist is
// ErrTaskNotFound at once.
func (c *Client) Wait(ctx context.Context, id TaskID) (TaskInfo, error) {
	var last TaskInfo
	for wait := firstWait; ; wait = min(2*wait, lastWait) {
		info, err := c.engine.tables.TaskGet(ctx, id)
		if err != nil && last.ID != 0 && ctx.Err() != nil {
			// ctx ended during a read: the last read stands.
			return last, waitEnded(ctx, id, last)
		}
		if err != nil {
			return info, c.engine.failed(err, "get task %d", id)
		}
		if info.Status.Terminal() {
			return c.Get(ctx, id) // the whole task once, with its history
		}
		last = info
		select {
		case <-ctx.Done():
			return info, waitEnded(ctx, id, info)
		case <-time.After(wait):
		}
	}
}

// waitEnded is Wait's error when ctx ends before task id is finished.
func waitEnded(ctx context.Context, id TaskID, last TaskInfo) error {
	return fmt.Errorf("leasegen: waiting for task %d (%s): %w", id, last.Status, ctx.Err())
}

// ListByOwner returns up to limit tasks of owner, newest first, in any of
// statuses (all statuses when none are given). Tasks enqueued without
// WithOwner have no owner and are not listed here (List finds them).
func (c *Client) ListByOwner(ctx context.Context, owner string, limit int, statuses ...Status) ([]TaskInfo, error) {
	if owner == "" {
		return nil, fmt.Errorf("%w: ListByOwner needs an owner; tasks enqueued without WithOwner are found with List", ErrInvalidTask)
	}
	if len(statuses) == 0 {
		statuses = AllStatuses
	}
	if limit <= 0 {
		return nil, fmt.Errorf("%w: list limit must be > 0, got %d", ErrInvalidTask, limit)
	}
	infos, err := c.engine.tables.TaskListByOwner(ctx, owner, statuses, limit)
	return infos, c.engine.failed(err, "list tasks of owner %q", owner)
}

// Cancel asks for a task to stop. A queued task is CANCELLED at once and
// never runs; a running one becomes CANCEL_REQUESTED and its handler's
// context is cancelled at the worker's next heartbeat. It returns
// ErrTaskFinished for a task that already ended and ErrTaskNotFound for an
// unknown id.
func (c *Client) Cancel(ctx context.Context, id TaskID) error {
	changed, err := bookkeeping.ChangeTask(ctx, c.engine.tables, id, func(tx driver.Tables) (bool, error) { return tx.TaskCancelRequest(ctx, id) })
	if err != nil {
		return c.engine.failed(err, "cancel task %d", id)
	}
	if changed {
		// A workflow's steps after a cancelled one are cancelled now; when
		// this fails, recovery's pass over stalled steps does it.
		_, _ = bookkeeping.SettleChildren(ctx, c.engine.tables, []TaskID{id})
		return nil
	}
	info, err := c.engine.tables.TaskGet(ctx, id)
	if err != nil {
		return c.engine.failed(err, "get task %d", id)
	}
	if info.Status == StatusCancelRequested {
		return nil
	}
	return fmt.Errorf("%w: task %d is %s", ErrTaskFinished, id, info.Status)
}

// AttemptInfo is one attempt of a task (TaskInfo.Attempts).
type AttemptInfo = leasetype.AttemptInfo

// preview quotes the start of a payload for an error.
func preview(payload []byte) string {
	const show = 40
	if len(payload) > show {
		return fmt.Sprintf("%q...", payload[:show])
	}
	return fmt.Sprintf("%q", payload)
}
