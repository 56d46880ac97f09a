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

// TaskInfos converts rows with info, failing on the first row it cannot
// read.
func TaskInfos[R any](rows []R, info func(R) (leasetype.TaskInfo, error)) ([]leasetype.TaskInfo, error) {
	infos := make([]leasetype.TaskInfo, len(rows))
	for i, r := range rows {
		var err error
		if infos[i], err = info(r); err != nil {
			return nil, err
		}
	}
	return infos, nil
}

// StatusStrings converts statuses for a query's slice argument.
func StatusStrings(statuses []leasetype.Status) []string {
	out := make([]string, len(statuses))
	for i, s := range statuses {
		out[i] = string(s)
	}
	return out
}
