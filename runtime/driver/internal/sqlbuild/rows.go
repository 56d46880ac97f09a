package sqlbuild

import (
	"time"

	"github.com/leasegen/leasegen/runtime/leasetype"
)

// DueTimes reads a row's due_at as TaskInfo shows it: a running task's is
// when its lease ends, a finished task's when it finished; a queued task's
// is its available_at, which TaskInfo has already.
func DueTimes(status leasetype.Status, due time.Time) (leaseUntil, finishedAt time.Time) {
	switch {
	case status == leasetype.StatusRunning || status == leasetype.StatusCancelRequested:
		return due, time.Time{}
	case status.Terminal():
		return time.Time{}, due
	}
	return time.Time{}, time.Time{}
}

// LeaseHolder is a row's lease owner as TaskInfo shows it: nobody holds
// the lease of a queued task, whoever held it last.
func LeaseHolder(status leasetype.Status, owner string) string {
	if status == leasetype.StatusQueued {
		return ""
	}
	return owner
}

func StatusStrings(statuses []leasetype.Status) []string {
	out := make([]string, len(statuses))
	for i, s := range statuses {
		out[i] = string(s)
	}
	return out
}
