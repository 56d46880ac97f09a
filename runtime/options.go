package runtime

import (
	"fmt"
	"maps"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/leasegen/leasegen/runtime/driver"
)

// EnqueueOption sets one property of an enqueued task.
type EnqueueOption func(*enqueueOptions)

type enqueueOptions struct {
	priority    int
	delay       time.Duration
	runAt       time.Time
	maxAttempts int
	ownerID     string
	key         string
	keyRequired bool // set by WithUniqueKey: an empty key is refused
	metadata    map[string]string
	// The concurrency key (WithConcurrencyKey, WithSequentialKey), and
	// how many such options were given: more than one is refused.
	flowKey     string
	keyLimit    int
	keyBlocking bool
	flowKeys    int
	// The key and rate of WithKeyRate.
	rateKey string
	rate    driver.Rate
	// The key and weight of WithFairnessKey.
	fairKey    string
	fairWeight int
}

// WithPriority sets the priority: higher runs first. Default 0.
func WithPriority(p int) EnqueueOption {
	return func(o *enqueueOptions) { o.priority = p }
}

// WithDelay makes the task claimable d after enqueue, on the database's clock.
func WithDelay(d time.Duration) EnqueueOption {
	return func(o *enqueueOptions) { o.delay = d; o.runAt = time.Time{} }
}

// WithRunAt makes the task claimable at t (an absolute instant).
func WithRunAt(t time.Time) EnqueueOption {
	return func(o *enqueueOptions) { o.runAt = t; o.delay = 0 }
}

// WithMaxAttempts sets how many claims may end in failure before the task
// fails for good. Default ClientConfig.DefaultMaxAttempts.
func WithMaxAttempts(n int) EnqueueOption {
	return func(o *enqueueOptions) { o.maxAttempts = n }
}

// WithOwner sets the business owner (user, tenant) that ListByOwner finds.
func WithOwner(id string) EnqueueOption {
	return func(o *enqueueOptions) { o.ownerID = id }
}

// WithIdempotencyKey makes the enqueue idempotent per task type: enqueueing
// an existing key returns the existing task's id and stores nothing new,
// also under concurrent enqueues.
func WithIdempotencyKey(key string) EnqueueOption {
	return func(o *enqueueOptions) { o.key = key }
}

// WithUniqueKey is WithIdempotencyKey for a task that must be deduplicated:
// an empty key fails the enqueue with ErrInvalidTask instead of storing a
// task nothing deduplicates. The generated enqueue of a unique task uses it.
func WithUniqueKey(key string) EnqueueOption {
	return func(o *enqueueOptions) { o.key, o.keyRequired = key, true }
}

// WithMetadata attaches md's entries to the task: its handler reads them in
// Task.Metadata, and TaskInfo shows them. Entries of several WithMetadata
// options merge, the last one winning a key. Keys must be non-empty, keys
// and values valid UTF-8 without NUL bytes, and the whole at most 16 KiB as
// JSON. Meant for
// context that crosses into the task (a trace context, a request id), not
// for the payload.
func WithMetadata(md map[string]string) EnqueueOption {
	return func(o *enqueueOptions) {
		if len(md) == 0 {
			return
		}
		merged := make(map[string]string, len(o.metadata)+len(md))
		maps.Copy(merged, o.metadata)
		maps.Copy(merged, md)
		o.metadata = merged
	}
}

// maxMetadataBytes bounds a task's encoded metadata: room for a W3C trace
// context with its largest baggage (8 KiB), and more.
const maxMetadataBytes = 16 << 10

// Bounds every engine applies alike, so that a request one engine stores
// another does not refuse or change.
const (
	minPriority = math.MinInt32
	maxPriority = math.MaxInt32
	// maxDelay keeps now + delay inside every engine's time range.
	maxDelay = 100 * 365 * 24 * time.Hour
)

// RunAt bounds: MySQL's DATETIME ends with year 9999.
var (
	minRunAt = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	maxRunAt = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
)

// checkTaskType checks that taskType fits the task_type column.
func checkTaskType(taskType string) error {
	if problem := taskTypeProblem(taskType); problem != "" {
		return fmt.Errorf("%w: %s", ErrInvalidTask, problem)
	}
	return nil
}

// taskTypeProblem says why taskType does not fit the task_type column, or
// returns "": one rule for enqueues and handlers.
func taskTypeProblem(taskType string) string {
	switch {
	case taskType == "":
		return "empty task type"
	case len(taskType) > maxTaskTypeLen:
		return fmt.Sprintf("task type %.40q... is %d bytes, the limit is %d", taskType, len(taskType), maxTaskTypeLen)
	}
	for i := 0; i < len(taskType); i++ {
		if c := taskType[i]; c <= ' ' || c > '~' {
			return fmt.Sprintf("task type %q: only printable ASCII without spaces (byte %d is %#x)", taskType, i, c)
		}
	}
	return ""
}

// checkRow checks what the length checks of newTask do not: the
// characters and ranges each column can hold.
func checkRow(taskType string, o enqueueOptions) error {
	switch {
	case o.priority < minPriority || o.priority > maxPriority:
		return fmt.Errorf("%w: %s priority must be in %d..%d, got %d", ErrInvalidTask, taskType, minPriority, maxPriority, o.priority)
	case !utf8.ValidString(o.ownerID):
		return fmt.Errorf("%w: %s owner id %q is not valid UTF-8", ErrInvalidTask, taskType, o.ownerID)
	case strings.ContainsRune(o.ownerID, 0):
		return fmt.Errorf("%w: %s owner id %q holds a NUL byte, which PostgreSQL cannot store", ErrInvalidTask, taskType, o.ownerID)
	case o.keyRequired && o.key == "":
		return fmt.Errorf("%w: %s is unique, so its key must not be empty: set the payload field tagged leasegen:\"key\"", ErrInvalidTask, taskType)
	case !utf8.ValidString(o.key):
		return fmt.Errorf("%w: %s idempotency key %q is not valid UTF-8", ErrInvalidTask, taskType, o.key)
	case strings.ContainsRune(o.key, 0):
		return fmt.Errorf("%w: %s idempotency key %q holds a NUL byte, which PostgreSQL cannot store", ErrInvalidTask, taskType, o.key)
	case !validMetadata(o.metadata):
		return fmt.Errorf("%w: %s metadata: keys must be non-empty, keys and values valid UTF-8 without NUL bytes", ErrInvalidTask, taskType)
	case !o.runAt.IsZero() && (o.runAt.Before(minRunAt) || o.runAt.After(maxRunAt)):
		return fmt.Errorf("%w: %s run-at %s is outside %s..%s", ErrInvalidTask, taskType,
			o.runAt.UTC().Format(time.RFC3339), minRunAt.Format(time.DateOnly), maxRunAt.Format(time.DateOnly))
	}
	return nil
}

func validMetadata(md map[string]string) bool {
	for k, v := range md {
		if k == "" || !utf8.ValidString(k) || !utf8.ValidString(v) || strings.ContainsRune(k+v, 0) {
			return false
		}
	}
	return true
}
