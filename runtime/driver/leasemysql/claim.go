package leasemysql

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/driver/leasemysql/internal/mysqldb"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

func (s *store) EnsureRates(ctx context.Context, rates map[string]driver.Rate) error {
	for _, t := range slices.Sorted(maps.Keys(rates)) {
		query, args := sqlbuild.RateSlotsSQL(t, rates[t], mysqlDialect)
		if _, err := s.db.ExecContext(ctx, query, args...); err != nil {
			return fmt.Errorf("leasegen: create the rate slots of %s: %w", t, err)
		}
	}
	return nil
}

func (s *store) EnsureLimits(ctx context.Context, scopes []string) error {
	for _, scope := range scopes {
		if err := s.q.LimitEnsure(ctx, s.db, mysqldb.LimitEnsureParams{Scope: scope}); err != nil {
			return fmt.Errorf("leasegen: create limit row %q: %w", scope, err)
		}
	}
	return nil
}

// Claim takes up to req.Max queued tasks in one READ COMMITTED transaction:
// the paused types (with the claim's turn when it takes turns), whole
// candidate rows with FOR UPDATE SKIP LOCKED in Claim-index order, then
// one UPDATE per lease length that starts the leases on the database's
// clock. The rows are locked, so the UPDATE's effect is known without a
// read-back.
func (s *store) Claim(ctx context.Context, req driver.ClaimRequest) ([]driver.ClaimedTask, error) {
	var claimed []driver.ClaimedTask
	err := s.retry(ctx, func() error {
		return s.boundedTx(ctx, claimSessionIdle, func(tx mysqldb.DBTX) error {
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

func (s *store) claimTx(ctx context.Context, tx mysqldb.DBTX, req driver.ClaimRequest) ([]driver.ClaimedTask, error) {
	paused, err := s.pausedTypes(ctx, tx, req.TakeTurns || s.contendedLately())
	if err != nil {
		return nil, err
	}
	picked, err := sqlbuild.PlanClaim(ctx, mysqlClaimSource{s: s, tx: tx, paused: paused}, req)
	if err != nil || len(picked) == 0 {
		return nil, err
	}
	for lease, group := range sqlbuild.MarkClaimed(req, picked) {
		err = s.q.TaskClaimMark(ctx, tx, mysqldb.TaskClaimMarkParams{
			LeaseOwner: req.Owner,
			LeaseUs:    micros(lease),
			Ids:        group,
		})
		if err != nil {
			return nil, err
		}
	}
	if ids := sqlbuild.KeyRated(picked); len(ids) > 0 {
		if _, err := s.q.FlowSlotsStart(ctx, tx, mysqldb.FlowSlotsStartParams{Ids: ids}); err != nil {
			return nil, err
		}
	}
	return picked, nil
}

// claimTurnScope is the leasegen_limits row that claims taking turns lock
// first.
const claimTurnScope = "claim turn"

// contendedFor is how long claims take turns after one found rows that
// another claim held, whether or not the worker knows of other workers
// (ClaimRequest.TakeTurns follows the worker registry, which a worker
// reads at most once a recovery pass).
const contendedFor = 30 * time.Second

// contendedLately reports whether a claim of this store found rows that
// another claim held within contendedFor.
func (s *store) contendedLately() bool {
	at := s.contended.Load()
	return at != 0 && time.Since(time.Unix(0, at)) < contendedFor
}

// pausedTypes reads the paused types as a claim's first statement, taking
// the claim's turn with them when it takes turns.
func (s *store) pausedTypes(ctx context.Context, tx mysqldb.DBTX, turns bool) ([]string, error) {
	if !turns {
		return s.q.PausedTypeNames(ctx, tx)
	}
	return s.takeClaimTurn(ctx, tx)
}

// takeClaimTurn locks the claim turn's row for the rest of the claim's
// transaction, creating it on first use, and returns the paused types
// (read in the same statement): the claims of the workers that take turns
// run one at a time. Claims that ran side by side each started at
// the head of the queue and stepped over the rows the others had just
// locked (SKIP LOCKED reads them, then skips), and the more workers, the
// more of each claim went to that: on MariaDB, 8 worker hosts burnt down
// at half the rate of one, with twice the server's CPU per task. Taking
// turns, each claim finds the rows after the last one's, and 2 to 8 hosts
// keep one host's rate and CPU per task (docs/scaling.md). A claim is a
// few milliseconds, so the turns cap a server at what one claimer takes
// (tens of thousands of tasks a second), which is what one primary
// carries anyway.
func (s *store) takeClaimTurn(ctx context.Context, tx mysqldb.DBTX) ([]string, error) {
	for range 2 {
		rows, err := s.q.ClaimTurnTake(ctx, tx)
		if err != nil {
			return nil, err
		}
		if len(rows) > 0 {
			var paused []string
			for _, r := range rows {
				if r.TaskType.Valid {
					paused = append(paused, r.TaskType.String)
				}
			}
			return paused, nil
		}
		if err := s.q.LimitEnsure(ctx, tx, mysqldb.LimitEnsureParams{Scope: claimTurnScope}); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("the claim turn's row %q is missing after its insert", claimTurnScope)
}

// mysqlClaimSource reads a claim's inputs inside its transaction; paused
// are the paused types, which the claim's first statement read.
type mysqlClaimSource struct {
	s      *store
	tx     mysqldb.DBTX
	paused []string
}

// PausedTypes returns the paused types, read by the claim's first
// statement: a Pause that commits after that takes effect at the next
// claim.
func (c mysqlClaimSource) PausedTypes(context.Context) ([]string, error) {
	return c.paused, nil
}

// LockLimits locks the limit rows by writing them (LimitLock says why);
// the worker created them at start.
func (c mysqlClaimSource) LockLimits(ctx context.Context, scopes []string) error {
	locked, err := c.s.q.LimitLock(ctx, c.tx, mysqldb.LimitLockParams{Scopes: scopes})
	if err != nil {
		return err
	}
	if int(locked) != len(scopes) {
		return fmt.Errorf("limit rows missing (%d of %v): the worker creates them at start", locked, scopes)
	}
	return nil
}

// TakeRateSlots locks free slots of the type's rate with SKIP LOCKED:
// claims of one rated type do not wait for each other.
func (c mysqlClaimSource) TakeRateSlots(ctx context.Context, taskType string, rate driver.Rate, limit int) ([]int, error) {
	slots, err := c.s.q.RateSlotsTake(ctx, c.tx, mysqldb.RateSlotsTakeParams{TaskType: taskType, RateLimit: int32(rate.Limit), Limit: int32(limit)})
	return sqlbuild.Map(slots, func(n int32) int { return int(n) }), err
}

func (c mysqlClaimSource) StartRateSlots(ctx context.Context, taskType string, slots []int) error {
	return c.s.q.RateSlotsStart(ctx, c.tx, mysqldb.RateSlotsStartParams{
		TaskType: taskType, Slots: sqlbuild.Map(slots, func(n int) int32 { return int32(n) }),
	})
}

func (c mysqlClaimSource) RunningByType(ctx context.Context) (map[string]int, error) {
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

// Candidates locks up to limit claimable tasks of types, in claim order, in
// rounds of two steps: a plain scan of leasegen_tasks_due names the next
// tasks, then a locking read by primary key takes those no other claim
// holds. A locking read down the index itself would lock, and pay for,
// every entry that recent claims left for purge at the head of the queue:
// up to three times the cost of the whole claim under a steady burn-down.
// Tasks another claim held are excluded from the next round's scan.
func (c mysqlClaimSource) Candidates(ctx context.Context, types []string, limit int) ([]driver.ClaimedTask, error) {
	out := make([]driver.ClaimedTask, 0, limit) // the poller asks for at most maxClaimBatch
	// No task has id 0: an empty slice would become IN (NULL), which
	// NOT IN turns into "exclude everything".
	excluded := []int64{0}
	for range sqlbuild.ClaimRounds {
		want := limit - len(out)
		ids, err := c.s.q.TaskClaimScan(ctx, c.tx, mysqldb.TaskClaimScanParams{TaskTypes: types, Excluded: excluded, Limit: int32(want)})
		if err != nil || len(ids) == 0 {
			return out, err
		}
		rows, err := c.s.q.TaskClaimLock(ctx, c.tx, mysqldb.TaskClaimLockParams{Ids: ids})
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			out = append(out, driver.ClaimedTask{
				ID: leasetype.TaskID(r.ID), Type: r.TaskType, Payload: r.Payload, Priority: int(r.Priority),
				AvailableAt: r.AvailableAt, Attempt: int(r.Attempt), FreeAttempts: int(r.FreeAttempts),
				MaxAttempts: int(r.MaxAttempts), OwnerID: r.OwnerID, IdempotencyKey: r.IdempotencyKey.String, ConcurrencyKey: r.FlowKey.String,
				KeyRated: r.FlowSlot.Valid && r.FlowSlot.Int32 >= 0, KeyShared: r.FlowSlot.Valid && r.FlowSlot.Int32 < 0,
				Metadata: sqlbuild.NullBytes(r.Metadata), StartedAt: r.ClaimedAt,
			})
		}
		if len(rows) == len(ids) || len(ids) < want {
			break // all locked, or the queue has no more
		}
		c.s.contended.Store(time.Now().UnixNano()) // another claim held some
		excluded = append(excluded, ids...)
	}
	slices.SortFunc(out, sqlbuild.ClaimOrder)
	return out, nil
}

func (s *store) Probe(ctx context.Context, types, schedules []string) (driver.Probe, error) {
	r, err := s.q.TaskProbe(ctx, s.db, mysqldb.TaskProbeParams{TaskTypes: types, ScheduleNames: schedules})
	if err != nil {
		return driver.Probe{}, fmt.Errorf("leasegen: look for claimable tasks and due schedules: %w", err)
	}
	return driver.Probe{Claimable: r.Claimable, SchedulesDue: r.SchedulesDue}, nil
}
