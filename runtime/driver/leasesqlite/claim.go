package leasesqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/driver/internal/sqlbuild"
	"github.com/leasegen/leasegen/runtime/driver/leasesqlite/internal/sqlitedb"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// Claim takes up to req.Max queued tasks. Without concurrency limits it
// scans outside the write lock and holds the lock for one UPDATE only, so
// that the scan overlaps other writers; with limits the whole Claim runs in
// one write transaction, which counts the running tasks first.
func (s *store) Claim(ctx context.Context, req driver.ClaimRequest) ([]driver.ClaimedTask, error) {
	var claimed []driver.ClaimedTask
	var err error
	if req.Planned() {
		claimed, err = s.claimLimited(ctx, req)
	} else {
		claimed, err = s.claimScanned(ctx, req)
		if errors.Is(err, errKeyRated) {
			claimed, err = s.claimLimited(ctx, req)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("leasegen: claim: %w", err)
	}
	return claimed, nil
}

// errKeyRated stops a claim outside the write lock that scanned a task
// holding a slot of its key's rate: its start must move the slot on in
// the same transaction, which claimLimited has.
var errKeyRated = errors.New("a scanned task holds a rate slot")

// rateSlotted reports a scanned task that holds a slot of its key's rate
// (a fair key's share, -1, needs nothing at its start).
func rateSlotted(r sqlitedb.TaskClaimScanRow) bool { return r.FlowSlot.Valid && r.FlowSlot.Int64 >= 0 }

// claimScanned claims in rounds of two steps: a scan for claimable tasks
// without the write lock, then takes of those still queued at the attempt
// the scan saw, with one UPDATE per lease length (a task another process
// claimed, or claimed and released, since the scan no longer matches). The
// lock is held for the UPDATE alone, and its affected count tells whether
// every task was taken; only when some were not are the rows read back, and
// another round scans again, for at most claimRounds rounds.
func (s *store) claimScanned(ctx context.Context, req driver.ClaimRequest) ([]driver.ClaimedTask, error) {
	var claimed []driver.ClaimedTask
	for range sqlbuild.ClaimRounds {
		want := req.Max - len(claimed)
		scanned, err := s.q.TaskClaimScan(ctx, s.db, sqlitedb.TaskClaimScanParams{TaskTypes: req.Types, Limit: int64(want)})
		if err != nil || len(scanned) == 0 {
			return claimed, err
		}
		if slices.ContainsFunc(scanned, rateSlotted) {
			if claimed == nil {
				return nil, errKeyRated
			}
			return claimed, nil // the next claim takes the rest under the lock
		}
		taken, err := s.takeScanned(ctx, req, scanned)
		if err != nil {
			return nil, err
		}
		if claimed == nil {
			claimed = taken // the usual single round: no copy
		} else {
			claimed = append(claimed, taken...)
		}
		if len(taken) == len(scanned) || len(scanned) < want {
			break // all taken, or the queue has no more
		}
	}
	return claimed, nil
}

// takeScanned takes the scanned tasks that are still claimable and returns
// them as the claim leaves them, in the scan's order, which is the claim
// order.
func (s *store) takeScanned(ctx context.Context, req driver.ClaimRequest, scanned []sqlitedb.TaskClaimScanRow) ([]driver.ClaimedTask, error) {
	groups := map[time.Duration][]int{} // indexes into scanned, by lease
	for i, r := range scanned {
		lease := req.LeaseFor(r.TaskType)
		groups[lease] = append(groups[lease], i)
	}
	taken := make([]bool, len(scanned))
	for lease, group := range groups {
		refs := make([]driver.LeaseRef, len(group))
		for i, at := range group {
			refs[i] = driver.LeaseRef{ID: leasetype.TaskID(scanned[at].ID), Attempt: int(scanned[at].Attempt)}
		}
		oks, err := s.take(ctx, req.Owner, lease, refs)
		if err != nil {
			return nil, err
		}
		for i, at := range group {
			taken[at] = oks[i]
		}
	}
	claimed := make([]driver.ClaimedTask, 0, len(scanned))
	for i, r := range scanned {
		if taken[i] {
			t := scannedTask(r)
			t.Attempt++
			claimed = append(claimed, t)
		}
	}
	return claimed, nil
}

// take claims the tasks of refs that are still queued at the ref's attempt
// under owner's lease, and reports which it took.
func (s *store) take(ctx context.Context, owner string, lease time.Duration, refs []driver.LeaseRef) ([]bool, error) {
	query, args := claimTakeSQL(owner, lease, refs)
	n, err := sqlbuild.RowsAffected(ctx, s.retry, s.db, query, args)
	if err != nil {
		return nil, err
	}
	after := make([]driver.LeaseRef, len(refs)) // a taken task is at the next attempt
	for i, r := range refs {
		after[i] = driver.LeaseRef{ID: r.ID, Attempt: r.Attempt + 1}
	}
	return sqlbuild.LandedRows(owner, after, n, func(st leasetype.Status) bool {
		return st == leasetype.StatusRunning || st == leasetype.StatusCancelRequested
	},
		func(ids []int64) ([]sqlbuild.RowState, error) { return s.rowStates(ctx, ids) })
}

// claimTakeSQL builds the claim's UPDATE of the scanned refs. The unary +
// keeps SQLite on the primary key: a plain status term would send it down
// the whole queue index.
func claimTakeSQL(owner string, lease time.Duration, refs []driver.LeaseRef) (string, []any) {
	b := sqlbuild.NewStatement(sqliteDialect, len(refs)+4)
	b.WriteString("UPDATE leasegen_tasks SET status = 'RUNNING', attempt = attempt + 1, lease_owner = ")
	b.Bind(owner)
	b.WriteString(", due_at = " + sqliteNow + " + ")
	b.Bind(millis(lease))
	b.WriteString(", started_at = " + sqliteNow + ", updated_at = " + sqliteNow + " WHERE +status = 'QUEUED' AND +due_at <= " + sqliteNow + " AND ")
	sqlbuild.WriteAttemptFence(b, refs)
	return b.String(), b.Args
}

// claimLimited plans and marks a claim under concurrency limits in one
// write transaction.
func (s *store) claimLimited(ctx context.Context, req driver.ClaimRequest) ([]driver.ClaimedTask, error) {
	var claimed []driver.ClaimedTask
	err := s.immediate(ctx, func(conn *sql.Conn) error {
		claimed = nil
		picked, err := sqlbuild.PlanClaim(ctx, sqliteClaimSource{s: s, conn: conn}, req)
		if err != nil || len(picked) == 0 {
			return err
		}
		claimed = picked
		for lease, group := range sqlbuild.MarkClaimed(req, picked) {
			err := s.q.TaskClaimMark(ctx, conn, sqlitedb.TaskClaimMarkParams{
				LeaseOwner: sqlbuild.NullString(req.Owner), LeaseMs: millis(lease), Ids: group,
			})
			if err != nil {
				return err
			}
		}
		if ids := sqlbuild.KeyRated(picked); len(ids) > 0 {
			_, err = s.q.FlowSlotsStart(ctx, conn, sqlitedb.FlowSlotsStartParams{Ids: ids})
		}
		return err
	})
	return claimed, err
}

// sqliteClaimSource reads a claim's inputs inside its write transaction.
type sqliteClaimSource struct {
	s    *store
	conn *sql.Conn
}

// LockLimits has nothing to lock: the claim already holds the write lock.
func (sqliteClaimSource) LockLimits(context.Context, []string) error { return nil }

// PausedTypes is nil: TaskClaimScan leaves paused types out itself (SQLite
// reads the subquery once per statement).
func (sqliteClaimSource) PausedTypes(context.Context) ([]string, error) { return nil, nil }

func (c sqliteClaimSource) TakeRateSlots(ctx context.Context, taskType string, rate driver.Rate, limit int) ([]int, error) {
	slots, err := c.s.q.RateSlotsTake(ctx, c.conn, sqlitedb.RateSlotsTakeParams{TaskType: taskType, RateLimit: int64(rate.Limit), Lim: int64(limit)})
	return sqlbuild.Map(slots, func(n int64) int { return int(n) }), err
}

func (c sqliteClaimSource) StartRateSlots(ctx context.Context, taskType string, slots []int) error {
	return c.s.q.RateSlotsStart(ctx, c.conn, sqlitedb.RateSlotsStartParams{
		TaskType: taskType, Slots: sqlbuild.Map(slots, func(n int) int64 { return int64(n) }),
	})
}

func (c sqliteClaimSource) RunningByType(ctx context.Context) (map[string]int, error) {
	rows, err := c.s.q.TaskCountRunning(ctx, c.conn)
	if err != nil {
		return nil, err
	}
	running := make(map[string]int, len(rows))
	for _, r := range rows {
		running[r.TaskType] = int(r.Running)
	}
	return running, nil
}

func (c sqliteClaimSource) Candidates(ctx context.Context, types []string, limit int) ([]driver.ClaimedTask, error) {
	rows, err := c.s.q.TaskClaimScan(ctx, c.conn, sqlitedb.TaskClaimScanParams{TaskTypes: types, Limit: int64(limit)})
	if err != nil {
		return nil, err
	}
	out := make([]driver.ClaimedTask, len(rows))
	for i, r := range rows {
		out[i] = scannedTask(r)
	}
	return out, nil
}

// scannedTask is a scanned row as a claim may take it: at the row's
// attempt, started when the scan read it.
func scannedTask(r sqlitedb.TaskClaimScanRow) driver.ClaimedTask {
	return driver.ClaimedTask{
		ID: leasetype.TaskID(r.ID), Type: r.TaskType, Payload: r.Payload, Priority: int(r.Priority),
		AvailableAt: fromMillis(r.AvailableAt), Attempt: int(r.Attempt), FreeAttempts: int(r.FreeAttempts),
		MaxAttempts: int(r.MaxAttempts), OwnerID: r.OwnerID, IdempotencyKey: r.IdempotencyKey.String, ConcurrencyKey: r.FlowKey.String,
		KeyRated: r.FlowSlot.Valid && r.FlowSlot.Int64 >= 0, KeyShared: r.FlowSlot.Valid && r.FlowSlot.Int64 < 0,
		Metadata: sqlbuild.NullBytes(r.Metadata), StartedAt: fromMillis(r.ScannedAt),
	}
}

// Probe reads outside the write lock: WAL readers never wait.
func (s *store) Probe(ctx context.Context, types, schedules []string) (driver.Probe, error) {
	r, err := s.q.TaskProbe(ctx, s.db, sqlitedb.TaskProbeParams{TaskTypes: types, ScheduleNames: schedules})
	if err != nil {
		return driver.Probe{}, fmt.Errorf("leasegen: look for claimable tasks and due schedules: %w", err)
	}
	return driver.Probe{Claimable: r.Claimable, SchedulesDue: r.SchedulesDue}, nil
}
