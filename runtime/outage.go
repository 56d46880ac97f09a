package runtime

import (
	"log/slog"
	"math/rand/v2"
	"time"
)

// outageReport is how often a loop that keeps failing logs again.
const outageReport = 10 * time.Second

// firstOutageWait is the wait after a loop's first failure in a row; it
// doubles with each failure up to the loop's own interval.
const firstOutageWait = 50 * time.Millisecond

// outage follows one loop's failures in a row. It spaces the loop's retries
// out (doubling, with jitter, up to maxWait) and keeps the log to one line
// when failures start, one per outageReport while they go on, with their
// count, and one when the loop works again.
type outage struct {
	what    string // the loop's action, as log lines name it: "poll"
	worker  string
	logger  *slog.Logger
	clock   Clock
	maxWait time.Duration

	failures         int       // in a row
	since            time.Time // when the first of them happened
	reported         time.Time // when the last line was logged
	reportedFailures int       // failures counted by then
	wait             time.Duration
}

func newOutage(what string, cfg Config, maxWait time.Duration) *outage {
	return &outage{what: what, worker: cfg.WorkerID, logger: cfg.Logger, clock: cfg.Clock, maxWait: max(maxWait, firstOutageWait)}
}

// failing reports whether the last attempt failed.
func (o *outage) failing() bool { return o.failures > 0 }

// failed records a failure and returns how long to wait before the loop
// tries again.
func (o *outage) failed(err error) time.Duration {
	now := o.clock.Now()
	o.failures++
	switch {
	case o.failures == 1:
		o.since, o.reported, o.reportedFailures, o.wait = now, now, 1, firstOutageWait
		o.logger.Error("leasegen: "+o.what+" failed; retrying with back-off", "worker", o.worker, "err", err)
	case now.Sub(o.reported) >= outageReport:
		o.logger.Error("leasegen: "+o.what+" still failing", "worker", o.worker,
			"failures", o.failures-o.reportedFailures, "in", now.Sub(o.reported).Round(time.Millisecond),
			"outage", now.Sub(o.since).Round(time.Millisecond), "err", err)
		o.reported, o.reportedFailures = now, o.failures
	}
	wait := o.wait
	o.wait = min(2*o.wait, o.maxWait)
	return wait/2 + rand.N(wait/2+1)
}

// succeeded records a success, logging the end of an outage.
func (o *outage) succeeded() {
	if o.failures == 0 {
		return
	}
	o.logger.Info("leasegen: "+o.what+" works again", "worker", o.worker,
		"failures", o.failures, "outage", o.clock.Now().Sub(o.since).Round(time.Millisecond))
	o.failures = 0
}
