package sqlbuild

import (
	"cmp"
	"context"
	"maps"
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
	// TakeRateSlots locks up to limit slots of taskType's rate that are
	// free now (numbered below rate.Limit), skipping those another claim
	// holds, and returns their numbers.
	TakeRateSlots(ctx context.Context, taskType string, rate driver.Rate, limit int) ([]int, error)
	// StartRateSlots makes taskType's slots free again a window after now.
	StartRateSlots(ctx context.Context, taskType string, slots []int) error
	// Candidates locks up to limit claimable tasks of types, in claim
	// order, as their rows read before the claim (Attempt is the row's)
	// with StartedAt the database's time when the claim read them.
	Candidates(ctx context.Context, types []string, limit int) ([]driver.ClaimedTask, error)
}

// PlanClaim picks the tasks a claim takes, of the types that are not
// paused. Without limits or rates that is one candidate query over all of
// those types. With limits it locks the limit scopes first, so the running
// counts it reads cannot change until the claim commits; a type with a
// rate takes free slots of its rate (each start one). Each limited or
// rated type then gets its own query bounded by its free slots, the other
// types share one, and the merged candidates are cut to the claim's order
// and the global limit's free slots; the rate slots the claim uses move a
// window on.
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
	if !req.Planned() {
		return src.Candidates(ctx, req.Types, req.Max)
	}
	budget, running, err := lockLimits(ctx, src, req)
	if err != nil || budget <= 0 {
		return nil, err
	}
	var unlimited []string
	var picked []driver.ClaimedTask
	slots := map[string][]int{}
	for _, t := range req.Types {
		free, limited := budget, false
		if limit, ok := req.TypeLimits[t]; ok {
			free, limited = min(free, limit-running[t]), true
		}
		if rate, ok := req.TypeRates[t]; ok && free > 0 {
			if slots[t], err = src.TakeRateSlots(ctx, t, rate, free); err != nil {
				return nil, err
			}
			free, limited = len(slots[t]), true
		}
		if !limited {
			unlimited = append(unlimited, t)
			continue
		}
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
	picked = picked[:min(len(picked), budget)]
	return picked, startRateSlots(ctx, src, picked, slots)
}

// lockLimits locks req's limit scopes, when it has some, and returns the
// claim's budget under the global limit and the running tasks by type.
func lockLimits(ctx context.Context, src ClaimSource, req driver.ClaimRequest) (int, map[string]int, error) {
	scopes := req.LimitScopes()
	if len(scopes) == 0 {
		return req.Max, nil, nil
	}
	if err := src.LockLimits(ctx, scopes); err != nil {
		return 0, nil, err
	}
	running, err := src.RunningByType(ctx)
	if err != nil {
		return 0, nil, err
	}
	budget := req.Max
	if req.GlobalLimit > 0 {
		total := 0
		for _, n := range running {
			total += n
		}
		budget = min(budget, req.GlobalLimit-total)
	}
	return budget, running, nil
}

// startRateSlots moves on, for each rated type, as many of the slots the
// claim took as it starts tasks of the type.
func startRateSlots(ctx context.Context, src ClaimSource, picked []driver.ClaimedTask, slots map[string][]int) error {
	if len(slots) == 0 {
		return nil
	}
	started := map[string]int{}
	for _, p := range picked {
		started[p.Type]++
	}
	for _, t := range slices.Sorted(maps.Keys(slots)) {
		if n := started[t]; n > 0 {
			if err := src.StartRateSlots(ctx, t, slots[t][:n]); err != nil {
				return err
			}
		}
	}
	return nil
}

// KeyRated returns the ids of the claimed tasks that used a slot of their
// key's rate, whose windows the claim must move on (FlowSlotsStart).
func KeyRated(claimed []driver.ClaimedTask) []int64 {
	var ids []int64
	for _, c := range claimed {
		if c.KeyRated {
			ids = append(ids, int64(c.ID))
		}
	}
	return ids
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
