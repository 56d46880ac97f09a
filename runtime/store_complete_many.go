package runtime

import (
	"strings"
)

// completeManySQL builds the grouped, fenced completion shared by both
// engines: every row must be owner's, unexpired, running, and at its own
// attempt (the CASE), and gets its own result. now is the engine's
// expression for the database's clock.
func completeManySQL(owner string, reqs []completionRequest, now string) (string, []any) {
	var b strings.Builder
	args := make([]any, 0, 5*len(reqs)+1)
	b.WriteString("UPDATE leasegen_tasks SET finished_at = " + now + ", status = 'SUCCESS', result = ")
	if anyResult(reqs) {
		b.WriteString("CASE id")
		for _, r := range reqs {
			b.WriteString(" WHEN ? THEN ?")
			args = append(args, int64(r.Ref.ID), nullString(r.Result))
		}
		b.WriteString(" END")
	} else {
		b.WriteString("NULL")
	}
	b.WriteString(", lease_until = NULL, updated_at = " + now + " WHERE id IN (")
	for i, r := range reqs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('?')
		args = append(args, int64(r.Ref.ID))
	}
	b.WriteString(") AND lease_owner = ? AND status IN ('RUNNING', 'CANCEL_REQUESTED') AND lease_until > " + now + " AND attempt = CASE id")
	args = append(args, owner)
	for _, r := range reqs {
		b.WriteString(" WHEN ? THEN ?")
		args = append(args, int64(r.Ref.ID), r.Ref.Attempt)
	}
	b.WriteString(" END")
	return b.String(), args
}

func anyResult(reqs []completionRequest) bool {
	for _, r := range reqs {
		if r.Result != "" {
			return true
		}
	}
	return false
}

// completedIn marks, in request order, the requests whose ids were
// completed.
func completedIn(reqs []completionRequest, done map[TaskID]bool) []bool {
	oks := make([]bool, len(reqs))
	for i, r := range reqs {
		oks[i] = done[r.Ref.ID]
	}
	return oks
}
