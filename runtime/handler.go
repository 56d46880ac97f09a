package runtime

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
)

// HandlerFunc executes one task. Returning nil completes it; an error fails
// the attempt and retries it with backoff while attempts remain, unless it is
// Permanent; Snooze(d) runs it again after d without using an attempt. The
// context is cancelled when the lease is lost, cancellation is requested, the
// execution time runs out or the worker stops; context.Cause tells which.
type HandlerFunc func(ctx context.Context, t *Task) error

// Middleware wraps a handler (Config.Middleware): it runs around it with
// the task and its context, and may give the handler another context (a
// span, a logger) or return another error; wrap the handler's with %w, so
// that Permanent and Snooze still count. A panic in it fails the task as a
// handler's does.
type Middleware func(next HandlerFunc) HandlerFunc

// HandlerOption configures how a worker runs one task type.
type HandlerOption func(*handlerConfig)

type handlerConfig struct {
	lease       time.Duration
	timeout     time.Duration
	concurrency int
	rate        driver.Rate
	backoff     func(attempt int) time.Duration
	schedules   []Periodic
}

// WithLease sets the lease of the type's executions, overriding
// Config.LeaseTimeout. Config.HeartbeatInterval must stay below half of it.
func WithLease(d time.Duration) HandlerOption {
	return func(c *handlerConfig) { c.lease = d }
}

// WithTimeout bounds one execution of the type (its max execution time),
// overriding Config.MaxExecutionTime.
func WithTimeout(d time.Duration) HandlerOption {
	return func(c *handlerConfig) { c.timeout = d }
}

// WithConcurrency caps the executions of the type running at once across all
// workers. Every worker that handles the type must use the same value.
func WithConcurrency(n int) HandlerOption {
	return func(c *handlerConfig) { c.concurrency = n }
}

// WithRate makes the claims of all workers start at most limit tasks of
// the type in any window of length per (a window that starts at t ends
// before t+per), on the database's clock: a start is when a claim takes
// the task. Tasks over the rate stay queued; they use no attempt. limit
// is at most 10,000 (use a shorter window for more) and per a whole
// number of milliseconds. Every worker that handles the type must use the
// same rate.
func WithRate(limit int, per time.Duration) HandlerOption {
	return func(c *handlerConfig) { c.rate = driver.Rate{Limit: limit, Window: per} }
}

// WithBackoff sets the delay before retry number attempt (1 for the first
// retry). Default: ExponentialBackoff.
func WithBackoff(f func(attempt int) time.Duration) HandlerOption {
	return func(c *handlerConfig) { c.backoff = f }
}

// ExponentialBackoff is Exponential(time.Second): 1s, 2s, 4s... up to 10
// minutes, each drawn from the upper half of its range.
func ExponentialBackoff(attempt int) time.Duration {
	return exponential(time.Second, attempt)
}

// Exponential returns a backoff that starts at base, doubles per failed
// attempt up to 10 minutes, and draws each delay uniformly from the upper
// half, so retries of tasks that failed together spread out.
func Exponential(base time.Duration) func(attempt int) time.Duration {
	return func(attempt int) time.Duration { return exponential(base, attempt) }
}

const maxBackoff = 10 * time.Minute

func exponential(base time.Duration, attempt int) time.Duration {
	d := base
	for i := 1; i < attempt && d < maxBackoff; i++ {
		d *= 2
	}
	d = min(d, maxBackoff)
	return d/2 + rand.N(d/2+1)
}

// Registrar registers task handlers: a *Worker, or a test harness that
// records them. The generated Register functions take one.
type Registrar interface {
	Handle(taskType string, fn HandlerFunc, opts ...HandlerOption) error
}

var _ Registrar = (*Worker)(nil)

// handler is one registered task type.
type handler struct {
	fn        HandlerFunc
	cfg       handlerConfig
	schedules []schedule // cfg.schedules, checked
}

func newHandler(taskType string, fn HandlerFunc, opts []HandlerOption) (*handler, error) {
	if problem := taskTypeProblem(taskType); problem != "" {
		return nil, fmt.Errorf("%w: %s, as Enqueue requires", ErrInvalidConfig, problem)
	}
	if fn == nil {
		return nil, fmt.Errorf("%w: nil handler for task type %q", ErrInvalidConfig, taskType)
	}
	h := &handler{fn: fn, cfg: handlerConfig{backoff: ExponentialBackoff}}
	for _, opt := range opts {
		opt(&h.cfg)
	}
	if h.cfg.lease < 0 {
		return nil, fmt.Errorf("%w: task type %q: lease must be > 0, got %s", ErrInvalidConfig, taskType, h.cfg.lease)
	}
	if h.cfg.timeout < 0 {
		return nil, fmt.Errorf("%w: task type %q: timeout must be > 0, got %s", ErrInvalidConfig, taskType, h.cfg.timeout)
	}
	if h.cfg.concurrency < 0 {
		return nil, fmt.Errorf("%w: task type %q: concurrency must be >= 0 (0 means no limit), got %d", ErrInvalidConfig, taskType, h.cfg.concurrency)
	}
	if h.cfg.rate != (driver.Rate{}) {
		if problem := rateProblem(h.cfg.rate); problem != "" {
			return nil, fmt.Errorf("%w: task type %q: WithRate %s", ErrInvalidConfig, taskType, problem)
		}
	}
	if h.cfg.backoff == nil {
		return nil, fmt.Errorf("%w: task type %q: nil backoff", ErrInvalidConfig, taskType)
	}
	for _, p := range h.cfg.schedules {
		s, err := newSchedule(taskType, p)
		if err != nil {
			return nil, err
		}
		h.schedules = append(h.schedules, s)
	}
	return h, nil
}
