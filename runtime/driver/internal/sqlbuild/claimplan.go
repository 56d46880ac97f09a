package sqlbuild

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
)

// Candidate is a queued task a claim may take, as its row reads before the
// claim (Attempt is the row's, StartedAt is zero), with the database's time
// when the claim read it.
type Candidate struct {
	driver.ClaimedTask
	ClaimedAt time.Time
}

// Claimed is the candidate as the claim's UPDATE leaves it: the same
// changes, applied here instead of read back.
func (c Candidate) Claimed() driver.ClaimedTask {
	t := c.ClaimedTask
	t.Attempt++
	t.StartedAt = c.ClaimedAt
	return t
}

// ClaimRounds bounds the rounds of a claim that scans for tasks without
// locking them and then takes them: a round comes up short only when
// concurrent claims took or hold its tasks.
const ClaimRounds = 3

// ClaimSource is what planClaim reads inside an engine's claim transaction.
type ClaimSource interface {
	// PausedTypes lists the paused task types that Candidates must not be
	// asked for; nil when Candidates leaves paused types out itself.
	PausedTypes(ctx context.Context) ([]string, error)
	// LockLimits serializes the claimers of limited scopes until commit.
	LockLimits(ctx context.Context, scopes []string) error
	RunningByType(ctx context.Context) (map[string]int, error)
	// Candidates locks up to limit claimable tasks of types, in claim order.
	Candidates(ctx context.Context, types []string, limit int) ([]Candidate, error)
}

// PlanClaim picks the tasks a claim takes, of the types that are not
// paused. Without limits that is one candidate query over all of those
// types. With limits it locks the limit scopes first, so the running
// counts it reads cannot change until the claim commits; each limited type
// then gets its own query bounded by its free slots, the unlimited types
// share one, and the merged candidates are cut to the claim's order and
// the global limit's free slots.
func PlanClaim(ctx context.Context, src ClaimSource, req driver.ClaimRequest) ([]Candidate, error) {
	paused, err := src.PausedTypes(ctx)
	if err != nil {
		return nil, err
	}
	if len(paused) > 0 {
		req.Types = slices.DeleteFunc(slices.Clone(req.Types), func(t string) bool { return slices.Contains(paused, t) })
		if len(req.Types) == 0 {
			return nil, nil
		}
	}
	scopes := req.LimitScopes()
	if len(scopes) == 0 {
		return src.Candidates(ctx, req.Types, req.Max)
	}
	if err := src.LockLimits(ctx, scopes); err != nil {
		return nil, err
	}
	running, err := src.RunningByType(ctx)
	if err != nil {
		return nil, err
	}
	budget := req.Max
	if req.GlobalLimit > 0 {
		total := 0
		for _, n := range running {
			total += n
		}
		budget = min(budget, req.GlobalLimit-total)
	}
	if budget <= 0 {
		return nil, nil
	}
	var unlimited []string
	var picked []Candidate
	for _, t := range req.Types {
		limit, ok := req.TypeLimits[t]
		if !ok {
			unlimited = append(unlimited, t)
			continue
		}
		free := min(budget, limit-running[t])
		if free <= 0 {
			continue
		}
		rows, err := src.Candidates(ctx, []string{t}, free)
		if err != nil {
			return nil, err
		}
		picked = append(picked, rows...)
	}
	if len(unlimited) > 0 {
		rows, err := src.Candidates(ctx, unlimited, budget)
		if err != nil {
			return nil, err
		}
		picked = append(picked, rows...)
	}
	slices.SortFunc(picked, ClaimOrder)
	return picked[:min(len(picked), budget)], nil
}

// ClaimOrder is the claim index's order: priority DESC, available_at, id.
func ClaimOrder(a, b Candidate) int { return TaskOrder(a.ClaimedTask, b.ClaimedTask) }

// TaskOrder is ClaimOrder of claimed tasks.
func TaskOrder(a, b driver.ClaimedTask) int {
	return cmp.Or(
		cmp.Compare(b.Priority, a.Priority),
		a.AvailableAt.Compare(b.AvailableAt),
		cmp.Compare(a.ID, b.ID),
	)
}

// LeaseGroups splits the candidates' ids by the lease of their type (one
// group unless task types set their own lease) and returns the tasks as the
// claim leaves them, in claim order.
func LeaseGroups(req driver.ClaimRequest, picked []Candidate) (claimed []driver.ClaimedTask, groups map[time.Duration][]int64) {
	claimed = make([]driver.ClaimedTask, len(picked))
	groups = map[time.Duration][]int64{}
	for i, c := range picked {
		lease := req.LeaseFor(c.Type)
		groups[lease] = append(groups[lease], int64(c.ID))
		claimed[i] = c.Claimed()
	}
	return claimed, groups
}
