package runtime

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
)

// candidate is a queued task a claim may take, as its row reads before the
// claim (Attempt is the row's, StartedAt is zero), with the database's time
// when the claim read it.
type candidate struct {
	driver.ClaimedTask
	ClaimedAt time.Time
}

// claimed is the candidate as the claim's UPDATE leaves it: the same
// changes, applied here instead of read back.
func (c candidate) claimed() driver.ClaimedTask {
	t := c.ClaimedTask
	t.Attempt++
	t.StartedAt = c.ClaimedAt
	return t
}

// claimRounds bounds the rounds of a claim that scans for tasks without
// locking them and then takes them: a round comes up short only when
// concurrent claims took or hold its tasks.
const claimRounds = 3

// claimSource is what planClaim reads inside an engine's claim transaction.
type claimSource interface {
	// lockLimits serializes the claimers of limited scopes until commit.
	lockLimits(ctx context.Context, scopes []string) error
	runningByType(ctx context.Context) (map[string]int, error)
	// candidates locks up to limit claimable tasks of types, in claim order.
	candidates(ctx context.Context, types []string, limit int) ([]candidate, error)
}

// planClaim picks the tasks a claim takes. Without limits that is one
// candidate query over all of the worker's types. With limits it locks the
// limit scopes first, so the running counts it reads cannot change until the
// claim commits; each limited type then gets its own query bounded by its
// free slots, the unlimited types share one, and the merged candidates are
// cut to the claim's order and the global limit's free slots.
func planClaim(ctx context.Context, src claimSource, req driver.ClaimRequest) ([]candidate, error) {
	scopes := limitScopes(req)
	if len(scopes) == 0 {
		return src.candidates(ctx, req.Types, req.Max)
	}
	if err := src.lockLimits(ctx, scopes); err != nil {
		return nil, err
	}
	running, err := src.runningByType(ctx)
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
	var picked []candidate
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
		rows, err := src.candidates(ctx, []string{t}, free)
		if err != nil {
			return nil, err
		}
		picked = append(picked, rows...)
	}
	if len(unlimited) > 0 {
		rows, err := src.candidates(ctx, unlimited, budget)
		if err != nil {
			return nil, err
		}
		picked = append(picked, rows...)
	}
	slices.SortFunc(picked, claimOrder)
	return picked[:min(len(picked), budget)], nil
}

// claimOrder is the claim index's order: priority DESC, available_at, id.
func claimOrder(a, b candidate) int {
	return cmp.Or(
		cmp.Compare(b.Priority, a.Priority),
		a.AvailableAt.Compare(b.AvailableAt),
		cmp.Compare(a.ID, b.ID),
	)
}

// limitScopes lists, in lock order, the limit scopes a claim must lock.
func limitScopes(req driver.ClaimRequest) []string {
	var scopes []string
	if req.GlobalLimit > 0 {
		scopes = append(scopes, globalScope)
	}
	for _, t := range req.Types {
		if _, ok := req.TypeLimits[t]; ok {
			scopes = append(scopes, t)
		}
	}
	slices.Sort(scopes)
	return scopes
}

// globalScope is the limit scope of the global limit.
const globalScope = "*"

// leaseGroups splits the candidates' ids by the lease of their type (one
// group unless task types set their own lease) and returns the tasks as the
// claim leaves them, in claim order.
func leaseGroups(req driver.ClaimRequest, picked []candidate) (claimed []driver.ClaimedTask, groups map[time.Duration][]int64) {
	claimed = make([]driver.ClaimedTask, len(picked))
	groups = map[time.Duration][]int64{}
	for i, c := range picked {
		lease := req.LeaseFor(c.Type)
		groups[lease] = append(groups[lease], int64(c.ID))
		claimed[i] = c.claimed()
	}
	return claimed, groups
}
