package runtime

import "time"

// dueTimes reads a row's due_at as TaskInfo shows it: a running task's is
// when its lease ends, a finished task's when it finished; a queued task's
// is its available_at, which TaskInfo has already.
func dueTimes(status Status, due time.Time) (leaseUntil, finishedAt time.Time) {
	switch {
	case status == StatusRunning || status == StatusCancelRequested:
		return due, time.Time{}
	case status.Terminal():
		return time.Time{}, due
	}
	return time.Time{}, time.Time{}
}

// leaseHolder is a row's lease owner as TaskInfo shows it: nobody holds
// the lease of a queued task, whoever held it last.
func leaseHolder(status Status, owner string) string {
	if status == StatusQueued {
		return ""
	}
	return owner
}
