package driver

//go:generate go run ./internal/tablesgen

import (
	"context"
	"math"
	"time"

	"github.com/leasegen/leasegen/runtime/leasetype"
)

// Tables runs the queries on leasegen's bookkeeping tables (workers,
// schedules, attempts, throughput, paused types) and the operator's reads
// and actions on tasks, one method per query, named as the query is in
// queries/<engine>/*.sql. The algorithms over them (registering a
// worker, firing a schedule, keeping attempts, rolling up throughput)
// live in package runtime, once for every engine; a Tables converts
// between its engine's rows and these types, and nothing more.
//
// On the pool (Driver.Tables), each writing method is its own statement,
// run again by the driver after a conflict its engine reports (a
// deadlock, a lock wait that timed out, a busy database). Within InTx,
// every method runs in the transaction and none is retried alone.
type Tables interface {
	// InTx runs fn in one transaction, with tx's methods bound to it, and
	// commits when fn returns nil. After a conflict it rolls back and runs
	// fn again (at most three times in all): fn must have no effect
	// outside tx. The promise each engine keeps, and drivertest checks:
	// after WorkerLockRegistry, another transaction that takes it waits
	// until this one ends and then sees its writes; ScheduleLockDue skips
	// the rows another transaction locked.
	InTx(ctx context.Context, fn func(tx Tables) error) error
	// Now reads the database's clock.
	Now(ctx context.Context) (time.Time, error)

	// WorkerLockRegistry takes the lock that serializes registrations
	// until the transaction ends (a no-op outside InTx, and on an engine
	// whose write transactions are serialized already).
	WorkerLockRegistry(ctx context.Context) error
	// WorkerDeleteExpired deletes the rows whose expiry has passed.
	WorkerDeleteExpired(ctx context.Context) error
	// WorkerListLive lists the rows that have not expired, by id.
	WorkerListLive(ctx context.Context) ([]leasetype.WorkerInfo, error)
	// WorkerInsert inserts r's row, alive for r.TTL, and reports false
	// when a row with its id exists.
	WorkerInsert(ctx context.Context, r WorkerRegistration) (bool, error)
	// WorkerRenew moves row id's expiry to ttl from now and reports
	// whether the row exists.
	WorkerRenew(ctx context.Context, id string, ttl time.Duration) (bool, error)
	// WorkerDelete deletes row id, if any.
	WorkerDelete(ctx context.Context, id string) error

	// ScheduleGet reads schedule name's spec and next run (locking the row
	// within InTx where the engine locks rows); false when none is stored.
	ScheduleGet(ctx context.Context, name string) (StoredSchedule, bool, error)
	// ScheduleInsert stores def, new, with its first run at next.
	ScheduleInsert(ctx context.Context, def ScheduleDef, next time.Time) error
	// ScheduleRedefine rewrites stored schedule def.Name's definition and
	// next run; its pause and counters stay.
	ScheduleRedefine(ctx context.Context, def ScheduleDef, next time.Time) error
	// ScheduleLockDue locks, by name, the unpaused schedules among names
	// whose next run is at or before now, skipping the rows another
	// transaction holds.
	ScheduleLockDue(ctx context.Context, names []string, now time.Time) ([]LockedSchedule, error)
	// ScheduleAdvance moves a schedule on after a fire, fenced on the next
	// run the fire read (a.From), and reports whether the fence held.
	ScheduleAdvance(ctx context.Context, a ScheduleAdvance) (bool, error)
	// ScheduleList lists every stored schedule by name.
	ScheduleList(ctx context.Context) ([]leasetype.ScheduleInfo, error)
	// ScheduleSetPaused pauses or resumes schedule name and reports
	// whether that changed a row.
	ScheduleSetPaused(ctx context.Context, name string, paused bool) (bool, error)
	// ScheduleDelete deletes schedule name and reports whether there was
	// one.
	ScheduleDelete(ctx context.Context, name string) (bool, error)
	// TaskInsert is Driver.Insert on the Tables' transaction or pool.
	TaskInsert(ctx context.Context, tasks []NewTask) ([]leasetype.TaskID, error)

	// AttemptInsert stores r, finished now, unless it is stored already.
	AttemptInsert(ctx context.Context, r AttemptRecord) error
	// AttemptTrim keeps task id's keep latest recorded attempts, counted
	// from its newest, deleting older ones.
	AttemptTrim(ctx context.Context, id leasetype.TaskID, keep int) error
	// AttemptList lists task id's stored attempts, oldest first.
	AttemptList(ctx context.Context, id leasetype.TaskID) ([]leasetype.AttemptInfo, error)
	// AttemptOrphans returns up to limit ids of tasks that no longer
	// exist but whose attempts are stored.
	AttemptOrphans(ctx context.Context, limit int) ([]leasetype.TaskID, error)
	// AttemptDeleteTasks deletes the attempts of tasks ids and returns how
	// many it deleted.
	AttemptDeleteTasks(ctx context.Context, ids []leasetype.TaskID) (int, error)

	// ThroughputLastCounted returns the latest minute counted (the zero
	// instant of the epoch when none is).
	ThroughputLastCounted(ctx context.Context) (time.Time, error)
	// ThroughputCount counts, by type, final status and minute, the tasks
	// that finished in [from, to).
	ThroughputCount(ctx context.Context, from, to time.Time) ([]FinishedGroup, error)
	// ThroughputInsert stores one minute's row, replacing a stored one.
	ThroughputInsert(ctx context.Context, r MinuteRow) error
	// ThroughputTrim deletes the minutes before before.
	ThroughputTrim(ctx context.Context, before time.Time) error
	// ThroughputList returns the stored totals (all types) of the minutes
	// from since, oldest first.
	ThroughputList(ctx context.Context, since time.Time) ([]leasetype.ThroughputMinute, error)

	// CountTurnTake takes the turn to count every task when it is due,
	// holding it for hold, and reports whether it did.
	CountTurnTake(ctx context.Context, hold time.Duration) (bool, error)
	// CountTurnDone records the count read at countedAt, which took took;
	// the next is due wait from now.
	CountTurnDone(ctx context.Context, countedAt time.Time, took, wait time.Duration) error
	// CountTurnGet reads when the stored count was read (zero for none),
	// how long it took and when the next is due.
	CountTurnGet(ctx context.Context) (CountTurn, error)
	// CountsDelete deletes the stored count.
	CountsDelete(ctx context.Context) error
	// CountsInsert stores one type's tasks of one status.
	CountsInsert(ctx context.Context, c leasetype.TypeStatusCount) error
	// CountsList returns the stored count by type and status.
	CountsList(ctx context.Context) ([]leasetype.TypeStatusCount, error)

	// PausedTypeInsert pauses taskType and reports whether it was not
	// paused; PausedTypeDelete resumes it and reports whether it was.
	PausedTypeInsert(ctx context.Context, taskType string) (bool, error)
	PausedTypeDelete(ctx context.Context, taskType string) (bool, error)
	// PausedTypeList maps each paused type to when it was paused.
	PausedTypeList(ctx context.Context) (map[string]time.Time, error)

	// TaskGet returns one task, or an error wrapping
	// leasetype.ErrTaskNotFound.
	TaskGet(ctx context.Context, id leasetype.TaskID) (leasetype.TaskInfo, error)
	// TaskListByOwner lists up to limit tasks of owner in statuses,
	// newest first.
	TaskListByOwner(ctx context.Context, owner string, statuses []leasetype.Status, limit int) ([]leasetype.TaskInfo, error)
	// TaskList returns the tasks f selects, newest first.
	TaskList(ctx context.Context, f leasetype.Filter) ([]leasetype.TaskInfo, error)
	// TaskListFinished returns the tasks f selects, the latest finished
	// first, through the index of finished tasks; f.Limit is set and a
	// zero BeforeFinishedAt is the far future.
	TaskListFinished(ctx context.Context, f leasetype.FinishedFilter) ([]leasetype.TaskInfo, error)
	// TaskCancelRequest cancels a queued task, or asks the holder of a
	// running one to stop (CANCEL_REQUESTED), and reports whether the
	// task changed state.
	TaskCancelRequest(ctx context.Context, id leasetype.TaskID) (bool, error)
	// TaskRetry queues a FAILED or CANCELLED task again with fresh
	// attempts and reports whether the task changed state.
	TaskRetry(ctx context.Context, id leasetype.TaskID) (bool, error)
	// TaskDiscard deletes a task no worker holds (queued or finished) and
	// reports whether it did.
	TaskDiscard(ctx context.Context, id leasetype.TaskID) (bool, error)
	// TaskPurge deletes up to limit tasks that finished more than age ago
	// and returns how many it deleted.
	TaskPurge(ctx context.Context, age time.Duration, limit int) (int, error)
	// IdempotencyKeyTasks lists, newest first and up to limit, the tasks
	// whose committed work recorded key, of any type.
	IdempotencyKeyTasks(ctx context.Context, key string, limit int) ([]leasetype.TaskID, error)
	// IdempotencyKeyOfTask returns the key task id's committed work
	// recorded, "" for none.
	IdempotencyKeyOfTask(ctx context.Context, id leasetype.TaskID) (string, error)
	// TaskCountPurgeable counts the tasks TaskPurge would delete, up to
	// limit.
	TaskCountPurgeable(ctx context.Context, age time.Duration, limit int) (int, error)
	// TaskCountByTypeStatus counts every task by type and status.
	TaskCountByTypeStatus(ctx context.Context) ([]leasetype.TypeStatusCount, error)
	// TaskOldestQueued maps each type with queued tasks to the earliest
	// instant one became due.
	TaskOldestQueued(ctx context.Context) (map[string]time.Time, error)
	// TaskSampleStatus counts, by type, the first limit tasks of status
	// (QUEUED ones in claim order).
	TaskSampleStatus(ctx context.Context, status leasetype.Status, limit int) ([]StatusSample, error)
	// TaskRunningByOwner counts the running tasks of each lease owner.
	TaskRunningByOwner(ctx context.Context) (map[string]int, error)

	// FlowKeysUpsert stores the rows of keys, in lock order, with their
	// limits and failure rules (replacing stored rows'), and holds their
	// locks until the transaction ends.
	FlowKeysUpsert(ctx context.Context, keys []FlowKey) error
	// FlowKeysLock locks the stored rows of keys of taskType until the
	// transaction ends, in key order, and returns them; a key without a
	// row is left out.
	FlowKeysLock(ctx context.Context, taskType string, keys []string) ([]FlowKey, error)
	// FlowKeyDelete deletes a key's row.
	FlowKeyDelete(ctx context.Context, taskType, key string) error
	// FlowTasksWait makes tasks ids, inserted QUEUED without a key by the
	// same transaction, wait (WAITING) for slots of their keys (ids[i] of
	// keys[i]), and returns how many it changed: a task an idempotency key
	// deduplicated to stays as it is.
	FlowTasksWait(ctx context.Context, ids []leasetype.TaskID, keys []string) (int, error)
	// FlowKeysHolders counts, by key, the tasks of keys of taskType that
	// hold a slot (QUEUED, RUNNING, CANCEL_REQUESTED: Active) or do when
	// their key blocks on failure (FAILED); a key with none is left out. It
	// sees every task committed before the keys' rows were locked, also in
	// a caller's transaction (or fails it with a conflict).
	FlowKeysHolders(ctx context.Context, taskType string, keys []string) (map[string]KeyHolders, error)
	// FlowKeysPromote makes QUEUED, for each key of free (of taskType,
	// their rows locked), its first free[key] WAITING tasks in id order,
	// and returns how many it changed by key. The tasks of fair keys
	// (FlowKey.Share) are due from now at the earliest, and their starts
	// release their keys again (ClaimedTask.KeyShared).
	FlowKeysPromote(ctx context.Context, taskType string, free map[string]int, fair bool) (map[string]int, error)
	// FlowSlots returns, by key, the stored slots of keys' rates (of
	// taskType, their rows locked), each with whether a QUEUED task holds
	// it; a slot never stored is free.
	FlowSlots(ctx context.Context, taskType string, keys []string) (map[string][]RateSlot, error)
	// FlowKeysFirstWaiting returns, for each key of want (of taskType,
	// their rows locked), its first want[key] WAITING tasks in id order.
	FlowKeysFirstWaiting(ctx context.Context, taskType string, want map[string]int) (map[string][]leasetype.TaskID, error)
	// FlowTaskQueueInSlot gives waiting task id of key k the rate slot s:
	// it becomes QUEUED, due at s.FreeAt at the earliest (and from now, when
	// k is fair), and the slot is
	// stored with k's window; a claim that starts the task moves the
	// slot's FreeAt a window on.
	FlowTaskQueueInSlot(ctx context.Context, k FlowKey, id leasetype.TaskID, s RateSlot) error
	// FlowSlotsPrune deletes up to limit slots of keys' rates that were
	// free a minute ago and no QUEUED task holds, and returns how many.
	FlowSlotsPrune(ctx context.Context, limit int) (int, error)
	// FlowKeysStalled returns up to limit keys with a WAITING task and a
	// free slot.
	FlowKeysStalled(ctx context.Context, limit int) ([]FlowKey, error)
	// FlowKeyList returns up to limit stored keys by type and key, with
	// their tasks' counts.
	FlowKeyList(ctx context.Context, limit int) ([]leasetype.KeyInfo, error)

	// WorkflowInsert stores a workflow named name, enqueued now, and
	// returns its id.
	WorkflowInsert(ctx context.Context, name string) (leasetype.WorkflowID, error)
	// WorkflowStepInsert stores step s of a workflow.
	WorkflowStepInsert(ctx context.Context, s WorkflowStep) error
	// TaskDepInsert stores the edge d of a workflow.
	TaskDepInsert(ctx context.Context, d TaskDep) error
	// StepTasksWait makes tasks ids, inserted QUEUED by the same
	// transaction, WAITING for their parents, and returns how many it
	// changed.
	StepTasksWait(ctx context.Context, ids []leasetype.TaskID) (int, error)
	// StepsWaitingChildren returns, in id order, the waiting steps among
	// the children of parents.
	StepsWaitingChildren(ctx context.Context, parents []leasetype.TaskID) ([]leasetype.TaskID, error)
	// StepsLock locks, in id order, the rows of the steps among ids that
	// still wait, until the transaction ends, and returns how many.
	StepsLock(ctx context.Context, ids []leasetype.TaskID) (int, error)
	// StepParentStates returns, for each waiting step among ids, its
	// task's status with each of its parents' and the rule of their edge:
	// what committed last.
	StepParentStates(ctx context.Context, ids []leasetype.TaskID) ([]StepParentState, error)
	// StepTasksQueue makes the WAITING steps among ids QUEUED, at their
	// place in the queue, and returns how many it changed.
	StepTasksQueue(ctx context.Context, ids []leasetype.TaskID) (int, error)
	// StepTasksCancel makes the WAITING steps among ids CANCELLED, with
	// message as their last error, and returns how many it changed.
	StepTasksCancel(ctx context.Context, ids []leasetype.TaskID, message string) (int, error)
	// StepsSettle marks steps ids decided: they no longer wait.
	StepsSettle(ctx context.Context, ids []leasetype.TaskID) error
	// StepsWaitingAfter returns, in id order, up to limit waiting steps
	// with ids above after.
	StepsWaitingAfter(ctx context.Context, after leasetype.TaskID, limit int) ([]leasetype.TaskID, error)
	// StepsWaitingAny reports whether some step waits.
	StepsWaitingAny(ctx context.Context) (bool, error)
	// StepParents returns step id's parents by step name, with their
	// statuses and results.
	StepParents(ctx context.Context, id leasetype.TaskID) ([]leasetype.ParentResult, error)
	// StepsCancelledChildren returns, in id order, the decided children
	// of parents whose tasks are CANCELLED with message as their last
	// error (a settle's, for a parent that ended without success).
	StepsCancelledChildren(ctx context.Context, parents []leasetype.TaskID, message string) ([]leasetype.TaskID, error)
	// StepTasksRevive makes the CANCELLED steps among ids WAITING again,
	// without a last error, and returns how many it changed.
	StepTasksRevive(ctx context.Context, ids []leasetype.TaskID) (int, error)
	// StepsUnsettle marks steps ids waiting again.
	StepsUnsettle(ctx context.Context, ids []leasetype.TaskID) error
	// StepOf returns task id's step (its workflow and name), false when
	// the task is no workflow's step.
	StepOf(ctx context.Context, id leasetype.TaskID) (WorkflowStep, bool, error)
	// TaskDepsCopy gives task to the edges task from has to its children.
	TaskDepsCopy(ctx context.Context, from, to leasetype.TaskID) error
	// StepOrphans returns up to limit steps whose tasks no longer exist.
	StepOrphans(ctx context.Context, limit int) ([]leasetype.TaskID, error)
	// StepDeleteTasks deletes the steps of tasks ids and returns how many.
	StepDeleteTasks(ctx context.Context, ids []leasetype.TaskID) (int, error)
	// TaskDepDeleteChildren deletes the edges into tasks ids.
	TaskDepDeleteChildren(ctx context.Context, ids []leasetype.TaskID) error
	// WorkflowDeleteEmpty deletes up to limit workflows without a stored
	// step and returns how many.
	WorkflowDeleteEmpty(ctx context.Context, limit int) (int, error)
	// WorkflowList returns up to limit workflows, newest first, with their
	// steps counted.
	WorkflowList(ctx context.Context, limit int) ([]leasetype.WorkflowSummary, error)
	// WorkflowGet returns workflow id with its steps, or an error
	// wrapping leasetype.ErrWorkflowNotFound.
	WorkflowGet(ctx context.Context, id leasetype.WorkflowID) (leasetype.WorkflowInfo, error)
	// WorkflowsOpen returns, in id order, up to limit workflows with ids
	// above after that have not ended, with their steps counted.
	WorkflowsOpen(ctx context.Context, after leasetype.WorkflowID, limit int) ([]OpenWorkflow, error)
	// WorkflowEnd ends workflow id with status, took after its enqueue,
	// unless it has ended; it reports whether this call ended it.
	WorkflowEnd(ctx context.Context, id leasetype.WorkflowID, status leasetype.Status, took time.Duration) (bool, error)
	// WorkflowReopen makes the workflow of step task not ended (a retry
	// runs the step again).
	WorkflowReopen(ctx context.Context, task leasetype.TaskID) error
	// ParentTypesAdd records task types whose tasks may have waiting
	// children (those already recorded stay).
	ParentTypesAdd(ctx context.Context, types []string) error
	// ParentTypes returns the task types ParentTypesAdd recorded.
	ParentTypes(ctx context.Context) ([]string, error)

	// MigrationList maps each applied schema version to when it was
	// applied.
	MigrationList(ctx context.Context) (map[int]time.Time, error)
}

// WorkflowStep is one step's row: a workflow's task and its name in it.
type WorkflowStep struct {
	Workflow leasetype.WorkflowID
	Task     leasetype.TaskID
	Name     string
	Waiting  bool // it has parents: its task waits for them
}

// OpenWorkflow is a workflow that has not ended, with its steps counted
// as WorkflowsOpen read them.
type OpenWorkflow struct {
	ID   leasetype.WorkflowID
	Name string
	// Steps counts the stored steps; Unfinished those whose task is
	// stored and has not ended; Succeeded and Failed those that ended so.
	Steps, Unfinished, Succeeded, Failed int
	// Took is the time from the enqueue to the last step's end, on the
	// database's clock.
	Took time.Duration
}

// TaskDep is one edge of a workflow: Child starts after Parent ended.
type TaskDep struct {
	Parent, Child leasetype.TaskID
	// RunOnFailure says a Parent that ends without success lets Child
	// run; else it cancels it.
	RunOnFailure bool
}

// StepParentState is a waiting step's task and one of its parents, as a
// settle reads them.
type StepParentState struct {
	Child        leasetype.TaskID
	ChildType    string
	ChildStatus  leasetype.Status // empty: the step's task no longer exists
	Parent       leasetype.TaskID
	ParentStatus leasetype.Status // empty: the parent no longer exists
	RunOnFailure bool
}

// WorkerRegistration is the row a worker keeps while it runs.
type WorkerRegistration struct {
	ID             string
	Host           string
	PID            int
	MaxConcurrency int
	GlobalLimit    int
	TaskLimits     map[string]int
	Schedules      []string // the schedules it registers, by name
	// TTL is how long the row lives without a renewal: two
	// RecoveryIntervals, so one late renewal does not end it.
	TTL time.Duration
}

// ScheduleDef is a schedule as a worker registers it.
type ScheduleDef struct {
	Name     string
	TaskType string
	// Spec is the canonical schedule text: "cron 0 3 * * * Europe/Berlin",
	// "every 15m0s". Two specs that fire at the same instants have the
	// same text.
	Spec        string
	Misfire     string // skip, once, backfill:N
	Overlap     string // allow, skip
	Payload     []byte // each tick's task's
	Priority    int
	MaxAttempts int
}

// StoredSchedule is what a registration reads of a stored schedule.
type StoredSchedule struct {
	Spec    string
	NextRun time.Time
}

// LockedSchedule is a due schedule as ScheduleLockDue locked it.
type LockedSchedule struct {
	Name, TaskType, Spec string
	Payload              []byte
	Priority             int
	MaxAttempts          int
	NextRun              time.Time // the first tick not yet enqueued
	// LastStatus is the status of the latest tick's task, "" when none is
	// stored.
	LastStatus leasetype.Status
}

// ScheduleAdvance is one fire's update of its schedule's row.
type ScheduleAdvance struct {
	Name     string
	From     time.Time // the next run the fire read: the fence
	Next     time.Time // the next run after it
	Enqueued int       // ticks enqueued
	Missed   int       // due ticks not enqueued
	// The latest tick enqueued, when, and its task; zero when none was.
	LastTick   time.Time
	EnqueuedAt time.Time
	LastTask   leasetype.TaskID
}

// AttemptRecord is an attempt that ended without ending its task, to
// store in the task's history; it finished now, on the database's clock.
type AttemptRecord struct {
	TaskID    leasetype.TaskID
	Attempt   int
	Worker    string
	StartedAt time.Time // the claim's instant, on the database's clock
	// FinishedAt is when the attempt ended, on the database's clock; zero
	// for the instant the record is stored.
	FinishedAt time.Time
	Outcome    string // a leasetype.Attempt* outcome
	Error      string
	Duration   time.Duration // the handler's run time
}

// FinishedGroup is a count of ThroughputCount: the tasks of one type that
// reached one final status in one minute, counted in minutes since the
// Unix epoch.
type FinishedGroup struct {
	Type   string
	Status leasetype.Status
	Minute int64
	Tasks  int64
}

// MinuteRow is a row of leasegen_throughput: Type "" is the minute's total.
type MinuteRow struct {
	Type                         string
	Minute                       time.Time
	Succeeded, Failed, Cancelled int64
}

// CountTurn is leasegen_count_turn's row: when the stored count of every
// task was read (zero for none), how long reading it took, and when the
// next count is due.
type CountTurn struct {
	CountedAt time.Time
	Took      time.Duration
	NextAt    time.Time
}

// StatusSample is one task type's share of a status's first tasks.
type StatusSample struct {
	Type   string
	Tasks  int
	Oldest time.Time // the earliest due instant among them
}

// FlowKey is a concurrency key's row: the key of a task type, how many of
// its tasks may hold a slot at once, whether a FAILED task keeps its slot
// (a sequence that blocks on failure), its rate and its fair share. FlowKeysStalled fills in the
// names only.
type FlowKey struct {
	Type     string
	Key      string
	Limit    int
	Blocking bool
	Rate     Rate // Limit 0: none
	// Share is a fairness key's most tasks QUEUED at once (0: none): its
	// release queues them at the back of the queue, and each start lets
	// it queue one more.
	Share int
}

// NoKeyLimit is the Limit of a key with a rate and no concurrency limit.
const NoKeyLimit = math.MaxInt32

// RateSlot is one slot of a key's rate: when it may start a task again
// (zero: never used), and whether a QUEUED task holds it.
type RateSlot struct {
	Slot    int
	FreeAt  time.Time
	Pending bool
}

// KeyHolders counts a key's tasks that hold its slots: Active ones
// (QUEUED, RUNNING, CANCEL_REQUESTED) and Failed ones, which hold a slot
// only when the key blocks on failure.
type KeyHolders struct {
	Active, Failed int
	Queued         int // of Active: QUEUED, not yet started
}

// Holding is how many slots of k the holders take.
func (h KeyHolders) Holding(k FlowKey) int {
	if k.Blocking {
		return h.Active + h.Failed
	}
	return h.Active
}
