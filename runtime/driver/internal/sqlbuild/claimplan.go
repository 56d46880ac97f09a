package sqlbuild

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
)

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
	// Candidates locks up to limit claimable tasks of types, in claim
	// order, as their rows read before the claim (Attempt is the row's)
	// with StartedAt the database's time when the claim read them.
	Candidates(ctx context.Context, types []string, limit int) ([]driver.ClaimedTask, error)
}

// PlanClaim picks the tasks a claim takes, of the types that are not
// paused. Without limits that is one candidate query over all of those
// types. With limits it locks the limit scopes first, so the running
// counts it reads cannot change until the claim commits; each limited type
// then gets its own query bounded by its free slots, the unlimited types
// share one, and the merged candidates are cut to the claim's order and
// the global limit's free slots.
func PlanClaim(ctx context.Context, src ClaimSource, req driver.ClaimRequest) ([]driver.ClaimedTask, error) {
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
	var picked []driver.ClaimedTask
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
func ClaimOrder(a, b driver.ClaimedTask) int {
	return cmp.Or(
		cmp.Compare(b.Priority, a.Priority),
		a.AvailableAt.Compare(b.AvailableAt),
		cmp.Compare(a.ID, b.ID),
	)
}

// MarkClaimed makes picked, in place, what the claim's UPDATE leaves them
// (each task at its next attempt), so nothing is read back, and returns
// their ids by the lease of their type, for that UPDATE: one group unless
// task types set their own lease.
func MarkClaimed(req driver.ClaimRequest, picked []driver.ClaimedTask) map[time.Duration][]int64 {
	groups := make(map[time.Duration][]int64, 1)
	for i := range picked {
		picked[i].Attempt++
		lease := req.LeaseFor(picked[i].Type)
		group, ok := groups[lease]
		if !ok && len(req.TypeLeases) == 0 {
			group = make([]int64, 0, len(picked))
		}
		groups[lease] = append(group, int64(picked[i].ID))
	}
	return groups
}
