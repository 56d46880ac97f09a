package runtime

import "sync/atomic"

// Stats counts what one worker did since it started.
type Stats struct {
	Claimed           int64 // executions started
	Completed         int64 // fenced completions that took effect
	Retried           int64 // failures that queued the task again
	Failed            int64 // failures that ended the task (or its cancellation)
	Released          int64 // snoozes and shutdown releases
	LateClaims        int64 // claimed tasks handed back unstarted: the claim's reply came past their self-fence point
	StaleWrites       int64 // completions, failures and releases the fence rejected
	LeasesLost        int64 // executions cancelled because a renewal found the lease gone
	SelfFenced        int64 // executions cancelled because renewals failed too long
	HeartbeatFailures int64 // renew statements that failed
	Recovered         int64 // expired leases this worker's recoverer resolved
	Pruned            int64 // finished tasks deleted by retention
	// ConflictRetries counts operations on the worker's engine (shared by
	// every worker and client of it) run again after a deadlock, a lock-wait
	// timeout or a busy SQLite database.
	ConflictRetries int64
}

type stats struct {
	claimed, completed, retried, failed, released, staleWrites atomic.Int64
	leasesLost, selfFenced, heartbeatFailures, recovered       atomic.Int64
	pruned, lateClaims                                         atomic.Int64
}

func (s *stats) snapshot() Stats {
	return Stats{
		Claimed:           s.claimed.Load(),
		Completed:         s.completed.Load(),
		Retried:           s.retried.Load(),
		Failed:            s.failed.Load(),
		Released:          s.released.Load(),
		StaleWrites:       s.staleWrites.Load(),
		LeasesLost:        s.leasesLost.Load(),
		SelfFenced:        s.selfFenced.Load(),
		HeartbeatFailures: s.heartbeatFailures.Load(),
		Recovered:         s.recovered.Load(),
		Pruned:            s.pruned.Load(),
		LateClaims:        s.lateClaims.Load(),
	}
}
