package sqlbuild

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// Dialect is what the grouped statements that both engines share write
// differently.
type Dialect struct {
	Now string // the database's clock
	// Unindexed prefixes a column whose term must not pick the index:
	// SQLite's planner would walk a whole partial index for the status term
	// instead of looking the rows up by id.
	Unindexed string
	// Requeue is the SET list that hands a claimed task back at its place
	// in the queue without using an attempt (CANCELLED when its
	// cancellation was requested, WAITING when it used a slot of its key's
	// rate), as TaskRelease does with no delay.
	Requeue string
	// Param is the placeholder of the nth argument (from 1): "?" for
	// MySQL and SQLite.
	Param func(n int) string
	// UpsertWindow ends RateSlotsSQL's INSERT, followed by the window: a
	// stored slot takes the new window.
	UpsertWindow string
}

// QuestionMark is the placeholder of MySQL and SQLite.
func QuestionMark(int) string { return "?" }

// Statement builds a Statement's text and arguments together.
type Statement struct {
	strings.Builder
	Args  []any // the bound arguments, in order
	param func(n int) string
}

func NewStatement(d Dialect, capacity int) *Statement {
	return &Statement{Args: make([]any, 0, capacity), param: d.Param}
}

// Bind writes the placeholder of v and records v.
func (s *Statement) Bind(v any) {
	s.Args = append(s.Args, v)
	s.WriteString(s.param(len(s.Args)))
}

// ReleaseUnstartedSQL builds the statement that hands back tasks a claim
// took but whose handlers never started, fenced on owner and each task's
// attempt but not on an unexpired lease: no handler ran, and while the row
// stays RUNNING at that attempt under owner nobody else can hold it (a
// claim needs QUEUED, recovery changes the status).
func ReleaseUnstartedSQL(owner string, refs []driver.LeaseRef, d Dialect) (string, []any) {
	u := d.Unindexed
	b := NewStatement(d, len(refs)+2)
	b.WriteString("UPDATE leasegen_tasks SET " + d.Requeue + " WHERE " + u + "lease_owner = ")
	b.Bind(owner)
	b.WriteString(" AND " + u + "status IN ('RUNNING', 'CANCEL_REQUESTED') AND ")
	WriteAttemptFence(b, refs)
	return b.String(), b.Args
}

// CompleteManySQL builds the grouped, fenced completion shared by both
// engines: every row must be owner's, unexpired, running, and at its own
// attempt, and gets its own result.
func CompleteManySQL(owner string, reqs []driver.CompletionRequest, d Dialect) (string, []any) {
	now, u := d.Now, d.Unindexed
	b := NewStatement(d, 3*len(reqs)+2)
	b.WriteString("UPDATE leasegen_tasks SET status = 'SUCCESS', result = ")
	if anyResult(reqs) {
		b.WriteString("CASE id")
		for _, r := range reqs {
			b.WriteString(" WHEN ")
			b.Bind(int64(r.Ref.ID))
			b.WriteString(" THEN ")
			b.Bind(NullString(r.Result))
		}
		b.WriteString(" END")
	} else {
		b.WriteString("NULL")
	}
	// A finished task is due when it finished.
	b.WriteString(", due_at = " + now + ", updated_at = " + now + " WHERE " + u + "lease_owner = ")
	b.Bind(owner)
	b.WriteString(" AND " + u + "status IN ('RUNNING', 'CANCEL_REQUESTED') AND " + u + "due_at > " + now + " AND ")
	refs := make([]driver.LeaseRef, len(reqs))
	for i, r := range reqs {
		refs[i] = r.Ref
	}
	WriteAttemptFence(b, refs)
	return b.String(), b.Args
}

// WriteAttemptFence writes the condition that each row of refs is at its
// own attempt: grouped by attempt (a batch has few distinct ones), so the
// database tests each row against one short list instead of a CASE over
// the whole batch.
func WriteAttemptFence(b *Statement, refs []driver.LeaseRef) {
	b.WriteByte('(')
	for g, group := range byAttempt(refs) {
		if g > 0 {
			b.WriteString(" OR ")
		}
		b.WriteString("(attempt = ")
		b.Bind(group[0].Attempt)
		b.WriteString(" AND id IN (")
		for i, r := range group {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Bind(int64(r.ID))
		}
		b.WriteString("))")
	}
	b.WriteByte(')')
}

// byAttempt groups refs by attempt, in order of first appearance. A batch
// of one attempt, the usual case, is its own group.
func byAttempt(refs []driver.LeaseRef) [][]driver.LeaseRef {
	if len(refs) > 0 && !slices.ContainsFunc(refs, func(r driver.LeaseRef) bool { return r.Attempt != refs[0].Attempt }) {
		return [][]driver.LeaseRef{refs}
	}
	var groups [][]driver.LeaseRef
	index := map[int]int{}
	for _, r := range refs {
		i, ok := index[r.Attempt]
		if !ok {
			i = len(groups)
			index[r.Attempt] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], r)
	}
	return groups
}

func anyResult(reqs []driver.CompletionRequest) bool {
	for _, r := range reqs {
		if r.Result != "" {
			return true
		}
	}
	return false
}

// RowsAffected runs a grouped write with retry and returns how many rows it
// changed.
func RowsAffected(ctx context.Context, retry func(context.Context, func() error) error, db *sql.DB, query string, args []any) (int64, error) {
	var n int64
	err := retry(ctx, func() error {
		res, err := db.ExecContext(ctx, query, args...)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}

// RowState is what a read-back after a grouped write learns of one row.
type RowState struct {
	ID      leasetype.TaskID
	Attempt int
	Status  leasetype.Status
	Owner   string
}

// LandedRows tells, in order, which rows of refs a grouped write of
// owner's took effect on: all of them when the statement changed as many
// rows as it named (the common case, with no read-back); otherwise those
// that readBack now shows in a status landed accepts, held by owner at the
// ref's attempt.
func LandedRows(owner string, refs []driver.LeaseRef, affected int64, landed func(leasetype.Status) bool, readBack func(ids []int64) ([]RowState, error)) ([]bool, error) {
	oks := make([]bool, len(refs))
	if int(affected) == len(refs) {
		for i := range oks {
			oks[i] = true
		}
		return oks, nil
	}
	ids := make([]int64, len(refs))
	for i, r := range refs {
		ids[i] = int64(r.ID)
	}
	states, err := readBack(ids)
	if err != nil {
		return nil, fmt.Errorf("read back %d rows: %w", len(refs), err)
	}
	done := make(map[driver.LeaseRef]bool, len(states))
	for _, st := range states {
		if landed(st.Status) && st.Owner == owner {
			done[driver.LeaseRef{ID: st.ID, Attempt: st.Attempt}] = true
		}
	}
	for i, r := range refs {
		oks[i] = done[r]
	}
	return oks, nil
}

// CompletedRows tells, in request order, which of owner's grouped
// completions took effect.
func CompletedRows(owner string, reqs []driver.CompletionRequest, affected int64, readBack func(ids []int64) ([]RowState, error)) ([]bool, error) {
	refs := make([]driver.LeaseRef, len(reqs))
	for i, r := range reqs {
		refs[i] = r.Ref
	}
	oks, err := LandedRows(owner, refs, affected, func(s leasetype.Status) bool { return s == leasetype.StatusSuccess }, readBack)
	if err != nil {
		return nil, fmt.Errorf("leasegen: complete %d tasks: %w", len(reqs), err)
	}
	return oks, nil
}

// RateSlotsSQL builds the statement that stores the slots 0..rate.Limit-1
// of taskType's rate with its window, keeping the stored slots' free
// instants.
func RateSlotsSQL(taskType string, rate driver.Rate, d Dialect) (string, []any) {
	window := strconv.FormatInt(rate.Window.Microseconds(), 10)
	b := NewStatement(d, rate.Limit)
	b.WriteString("INSERT INTO leasegen_flow_slots (task_type, flow_key, slot, window_us, free_at) VALUES ")
	for i := range rate.Limit {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(")
		b.Bind(taskType)
		b.WriteString(", '', " + strconv.Itoa(i) + ", " + window + ", NULL)")
	}
	b.WriteString(" " + d.UpsertWindow + window)
	return b.String(), b.Args
}
