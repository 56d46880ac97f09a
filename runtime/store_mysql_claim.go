package runtime

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/leasegen/leasegen/runtime/internal/mysqldb"
)

// globalScope is the limit row that serializes claims under a global limit.
const globalScope = "*"

func (s *mysqlStore) ensureLimits(ctx context.Context, scopes []string) error {
	for _, scope := range scopes {
		if err := s.q.LimitEnsure(ctx, s.db, mysqldb.LimitEnsureParams{Scope: scope}); err != nil {
			return fmt.Errorf("leasegen: create limit row %q: %w", scope, err)
		}
	}
	return nil
}

// claim takes up to req.Max queued tasks in one READ COMMITTED transaction:
// candidates with FOR UPDATE SKIP LOCKED in claim-index order, one UPDATE
// that starts their leases on the database's clock, one read of the rows.
// Under concurrency limits it first locks the limit rows, so the running
// counts it reads cannot change until it commits.
func (s *mysqlStore) claim(ctx context.Context, req claimRequest) ([]claimedTask, error) {
	var claimed []claimedTask
	err := withConflictRetry(ctx, func() error {
		return inTx(ctx, s.db, func(tx *sql.Tx) error {
			var err error
			claimed, err = s.claimTx(ctx, tx, req)
			return err
		})
	})
	if err != nil {
		return nil, fmt.Errorf("leasegen: claim: %w", err)
	}
	return claimed, nil
}

func (s *mysqlStore) claimTx(ctx context.Context, tx *sql.Tx, req claimRequest) ([]claimedTask, error) {
	candidates, err := s.claimCandidates(ctx, tx, req)
	if err != nil || len(candidates) == 0 {
		return nil, err
	}
	ids := make([]int64, len(candidates))
	byLease := map[time.Duration][]int64{}
	for i, c := range candidates {
		ids[i] = c.ID
		lease := req.leaseFor(c.TaskType)
		byLease[lease] = append(byLease[lease], c.ID)
	}
	for lease, group := range byLease { // one group unless types set their own lease
		err = s.q.TaskClaimMark(ctx, tx, mysqldb.TaskClaimMarkParams{
			LeaseOwner: nullString(req.Owner),
			LeaseUs:    micros(lease),
			Ids:        group,
		})
		if err != nil {
			return nil, err
		}
	}
	rows, err := s.q.TaskGetMany(ctx, tx, mysqldb.TaskGetManyParams{Ids: ids})
	if err != nil {
		return nil, err
	}
	// Hand the tasks out in claim order, not the read's id order.
	position := make(map[int64]int, len(ids))
	for i, id := range ids {
		position[id] = i
	}
	claimed := make([]claimedTask, len(rows))
	for _, row := range rows {
		claimed[position[row.ID]] = claimedTask{TaskInfo: taskInfoFromRow(row), FreeAttempts: int(row.FreeAttempts)}
	}
	return claimed, nil
}

// claimCandidates locks the rows to claim. Without limits that is one
// SELECT over all of the worker's types. With limits, each limited type gets
// its own SELECT bounded by its free slots, the unlimited types share one,
// and the merged candidates are cut to the claim's order and the global
// limit's free slots.
func (s *mysqlStore) claimCandidates(ctx context.Context, tx *sql.Tx, req claimRequest) ([]mysqldb.TaskClaimCandidatesRow, error) {
	scopes := limitScopes(req)
	if len(scopes) == 0 {
		return s.q.TaskClaimCandidates(ctx, tx, mysqldb.TaskClaimCandidatesParams{
			TaskTypes: req.Types, Limit: int32(req.Max),
		})
	}
	locked, err := s.q.LimitLock(ctx, tx, mysqldb.LimitLockParams{Scopes: scopes})
	if err != nil {
		return nil, err
	}
	if len(locked) != len(scopes) {
		return nil, fmt.Errorf("limit rows missing (have %v, need %v): the worker creates them at start", locked, scopes)
	}
	running, err := s.runningByType(ctx, tx)
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
	var candidates []mysqldb.TaskClaimCandidatesRow
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
		rows, err := s.q.TaskClaimCandidates(ctx, tx, mysqldb.TaskClaimCandidatesParams{
			TaskTypes: []string{t}, Limit: int32(free),
		})
		if err != nil {
			return nil, err
		}
		candidates = append(candidates, rows...)
	}
	if len(unlimited) > 0 {
		rows, err := s.q.TaskClaimCandidates(ctx, tx, mysqldb.TaskClaimCandidatesParams{
			TaskTypes: unlimited, Limit: int32(budget),
		})
		if err != nil {
			return nil, err
		}
		candidates = append(candidates, rows...)
	}
	slices.SortFunc(candidates, claimOrder)
	return candidates[:min(len(candidates), budget)], nil
}

// claimOrder is the claim index's order: priority DESC, available_at, id.
func claimOrder(a, b mysqldb.TaskClaimCandidatesRow) int {
	return cmp.Or(
		cmp.Compare(b.Priority, a.Priority),
		a.AvailableAt.Compare(b.AvailableAt),
		cmp.Compare(a.ID, b.ID),
	)
}

// limitScopes lists, in lock order, the limit rows a claim must lock.
func limitScopes(req claimRequest) []string {
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

func (s *mysqlStore) runningByType(ctx context.Context, tx *sql.Tx) (map[string]int, error) {
	rows, err := s.q.TaskCountRunning(ctx, tx)
	if err != nil {
		return nil, err
	}
	running := make(map[string]int, len(rows))
	for _, r := range rows {
		running[r.TaskType] = int(r.Running)
	}
	return running, nil
}
