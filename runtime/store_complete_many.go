package runtime

import (
	"strings"
)

// completeManySQL builds the grouped, fenced completion shared by both
// engines: every row must be owner's, unexpired, running, and at its own
// attempt, and gets its own result. now is the engine's expression for the
// database's clock.
func completeManySQL(owner string, reqs []completionRequest, now string) (string, []any) {
	var b strings.Builder
	args := make([]any, 0, 5*len(reqs)+1)
	b.WriteString("UPDATE leasegen_tasks SET status = 'SUCCESS', result = ")
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
	// The fence on each row's own attempt, grouped by attempt (a batch has
	// few distinct ones), so the server tests each row against one short
	// list instead of a CASE over the whole batch.
	// A finished task is due when it finished.
	b.WriteString(", due_at = " + now + ", updated_at = " + now + " WHERE lease_owner = ? AND status IN ('RUNNING', 'CANCEL_REQUESTED') AND due_at > " + now + " AND (")
	args = append(args, owner)
	for g, group := range byAttempt(reqs) {
		if g > 0 {
			b.WriteString(" OR ")
		}
		b.WriteString("(attempt = ? AND id IN (")
		args = append(args, group[0].Ref.Attempt)
		for i, r := range group {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('?')
			args = append(args, int64(r.Ref.ID))
		}
		b.WriteString("))")
	}
	b.WriteString(")")
	return b.String(), args
}

// byAttempt groups the requests by attempt, in order of first appearance.
func byAttempt(reqs []completionRequest) [][]completionRequest {
	var groups [][]completionRequest
	index := map[int]int{}
	for _, r := range reqs {
		i, ok := index[r.Ref.Attempt]
		if !ok {
			i = len(groups)
			index[r.Ref.Attempt] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], r)
	}
	return groups
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
