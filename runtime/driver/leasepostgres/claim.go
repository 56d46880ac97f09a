package leasepostgres

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/driver/leasepostgres/internal/pgdb"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// Claim takes up to req.Max queued tasks. Without limits that is one
// statement, which locks the tasks with FOR UPDATE SKIP LOCKED and starts
// their leases; with limits one READ COMMITTED transaction locks the limit
// rows, counts the running tasks and takes each type's free slots.
func (s *store) Claim(ctx context.Context, req driver.ClaimRequest) ([]driver.ClaimedTask, error) {
	var claimed []driver.ClaimedTask
	err := s.retry(ctx, func() error {
		var err error
		if !req.Planned() {
			claimed, err = s.claimOne(ctx, req)
			return err
		}
		return s.inTx(ctx, s.db, orderedScans, func(tx *sql.Tx) error {
			claimed, err = s.claimLimited(ctx, tx, req)
			return err
		})
	})
	if err != nil {
		return nil, fmt.Errorf("leasegen: claim: %w", err)
	}
	return claimed, nil
}

// claimOne is the claim of one statement, in claim order.
func (s *store) claimOne(ctx context.Context, req driver.ClaimRequest) ([]driver.ClaimedTask, error) {
	p := pgdb.TaskClaimParams{
		LeaseOwner: req.Owner, DefaultLeaseUs: micros(req.Lease), TaskTypes: req.Types, Lim: int32(req.Max),
		LeaseTypes: []string{}, LeaseUs: []int64{},
	}
	for t, d := range req.TypeLeases {
		p.LeaseTypes = append(p.LeaseTypes, t)
		p.LeaseUs = append(p.LeaseUs, micros(d))
	}
	rows, err := s.q.TaskClaim(ctx, s.arrays, p)
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	claimed := make([]driver.ClaimedTask, len(rows))
	for i, r := range rows {
		claimed[i] = driver.ClaimedTask{
			ID: leasetype.TaskID(r.ID), Type: r.TaskType, Payload: r.Payload, Priority: int(r.Priority),
			AvailableAt: r.AvailableAt.UTC(), Attempt: int(r.Attempt), FreeAttempts: int(r.FreeAttempts),
			MaxAttempts: int(r.MaxAttempts), OwnerID: r.OwnerID, IdempotencyKey: r.IdempotencyKey.String, ConcurrencyKey: r.FlowKey.String,
			KeyRated: r.FlowSlot.Valid && r.FlowSlot.Int32 >= 0, KeyShared: r.FlowSlot.Valid && r.FlowSlot.Int32 < 0,
			Metadata: sqlbuild.NullBytes(r.Metadata), StartedAt: utc(r.StartedAt),
		}
	}
	slices.SortFunc(claimed, sqlbuild.ClaimOrder) // RETURNING follows no order
	return claimed, nil
}

func (s *store) claimLimited(ctx context.Context, tx *sql.Tx, req driver.ClaimRequest) ([]driver.ClaimedTask, error) {
	picked, err := sqlbuild.PlanClaim(ctx, pgClaimSource{s: s, tx: tx}, req)
	if err != nil || len(picked) == 0 {
		return nil, err
	}
	for lease, group := range sqlbuild.MarkClaimed(req, picked) {
		err = s.q.TaskClaimMark(ctx, nativeArrays{tx}, pgdb.TaskClaimMarkParams{LeaseOwner: req.Owner, LeaseUs: micros(lease), Ids: group})
		if err != nil {
			return nil, err
		}
	}
	if ids := sqlbuild.KeyRated(picked); len(ids) > 0 {
		if _, err := s.q.FlowSlotsStart(ctx, nativeArrays{tx}, pgdb.FlowSlotsStartParams{Ids: ids}); err != nil {
			return nil, err
		}
	}
	return picked, nil
}

// pgClaimSource reads a limited claim's inputs inside its transaction.
type pgClaimSource struct {
	s  *store
	tx *sql.Tx
}

// PausedTypes is nil: the candidates query leaves paused types out itself
// (its NOT IN subquery is evaluated once per statement).
func (pgClaimSource) PausedTypes(context.Context) ([]string, error) { return nil, nil }

// LockLimits locks the limit rows; the worker created them at start.
func (c pgClaimSource) LockLimits(ctx context.Context, scopes []string) error {
	locked, err := c.s.q.LimitLock(ctx, nativeArrays{c.tx}, pgdb.LimitLockParams{Scopes: scopes})
	if err != nil {
		return err
	}
	if len(locked) != len(scopes) {
		return fmt.Errorf("limit rows missing (have %v, need %v): the worker creates them at start", locked, scopes)
	}
	return nil
}

// TakeRateSlots locks free slots of the type's rate with SKIP LOCKED:
// claims of one rated type do not wait for each other.
func (c pgClaimSource) TakeRateSlots(ctx context.Context, taskType string, rate driver.Rate, limit int) ([]int, error) {
	slots, err := c.s.q.RateSlotsTake(ctx, c.tx, pgdb.RateSlotsTakeParams{TaskType: taskType, RateLimit: int32(rate.Limit), Lim: int32(limit)})
	return sqlbuild.Map(slots, func(n int32) int { return int(n) }), err
}

func (c pgClaimSource) StartRateSlots(ctx context.Context, taskType string, slots []int) error {
	return c.s.q.RateSlotsStart(ctx, nativeArrays{c.tx}, pgdb.RateSlotsStartParams{
		TaskType: taskType, Slots: sqlbuild.Map(slots, func(n int) int32 { return int32(n) }),
	})
}

func (c pgClaimSource) RunningByType(ctx context.Context) (map[string]int, error) {
	rows, err := c.s.q.TaskCountRunning(ctx, c.tx)
	if err != nil {
		return nil, err
	}
	running := make(map[string]int, len(rows))
	for _, r := range rows {
		running[r.TaskType] = int(r.Running)
	}
	return running, nil
}

func (c pgClaimSource) Candidates(ctx context.Context, types []string, limit int) ([]driver.ClaimedTask, error) {
	rows, err := c.s.q.TaskClaimCandidates(ctx, nativeArrays{c.tx}, pgdb.TaskClaimCandidatesParams{TaskTypes: types, Lim: int32(limit)})
	if err != nil {
		return nil, err
	}
	out := make([]driver.ClaimedTask, len(rows))
	for i, r := range rows {
		out[i] = driver.ClaimedTask{
			ID: leasetype.TaskID(r.ID), Type: r.TaskType, Payload: r.Payload, Priority: int(r.Priority),
			AvailableAt: r.AvailableAt.UTC(), Attempt: int(r.Attempt), FreeAttempts: int(r.FreeAttempts),
			MaxAttempts: int(r.MaxAttempts), OwnerID: r.OwnerID, IdempotencyKey: r.IdempotencyKey.String, ConcurrencyKey: r.FlowKey.String,
			KeyRated: r.FlowSlot.Valid && r.FlowSlot.Int32 >= 0, KeyShared: r.FlowSlot.Valid && r.FlowSlot.Int32 < 0,
			Metadata: sqlbuild.NullBytes(r.Metadata), StartedAt: r.ClaimedAt.UTC(),
		}
	}
	return out, nil
}

func (s *store) Probe(ctx context.Context, types, schedules []string) (driver.Probe, error) {
	r, err := s.q.TaskProbe(ctx, s.arrays, pgdb.TaskProbeParams{TaskTypes: types, ScheduleNames: schedules})
	if err != nil {
		return driver.Probe{}, fmt.Errorf("leasegen: look for claimable tasks and due schedules: %w", err)
	}
	return driver.Probe{Claimable: r.Claimable, SchedulesDue: r.SchedulesDue}, nil
}
