package runtime

import "time"

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
