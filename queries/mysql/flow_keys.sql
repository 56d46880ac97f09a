-- Queries on concurrency keys: leasegen_flow_keys' rows and the slots of
-- the keyed tasks (migrations/mysql/0014_flow_keys.sql). A task holds a
-- slot of its key while QUEUED, RUNNING or CANCEL_REQUESTED, and while
-- FAILED when its key blocks on failure; it waits in WAITING for one. Its
-- flow_state (0015_rates.sql) is HOLDING in each of those four statuses,
-- so a locking read of a key's holders finds a task whose status changes
-- meanwhile.

-- name: FlowKeyUpsert :exec
-- Creates a key's row with its limit, or sets the stored row's; the row
-- stays locked until the transaction ends.
INSERT INTO leasegen_flow_keys (task_type, flow_key, key_limit, blocking, rate_limit, rate_window_us, queue_limit, version)
VALUES (sqlc.arg(task_type), sqlc.arg(flow_key), sqlc.arg(key_limit), sqlc.arg(blocking), sqlc.arg(rate_limit), sqlc.arg(rate_window_us), sqlc.arg(queue_limit), 1)
ON DUPLICATE KEY UPDATE key_limit = sqlc.arg(key_limit), blocking = sqlc.arg(blocking),
  rate_limit = sqlc.arg(rate_limit), rate_window_us = sqlc.arg(rate_window_us), queue_limit = sqlc.arg(queue_limit), version = version + 1;

-- name: FlowKeysLock :execrows
-- Locks keys' rows by writing them (Galera certifies written rows only),
-- in key order.
UPDATE leasegen_flow_keys SET version = version + 1
WHERE task_type = sqlc.arg(task_type) AND flow_key IN (sqlc.slice(flow_keys))
ORDER BY flow_key;

-- name: FlowKeysGet :many
SELECT flow_key, key_limit, blocking, rate_limit, rate_window_us, queue_limit FROM leasegen_flow_keys
WHERE task_type = sqlc.arg(task_type) AND flow_key IN (sqlc.slice(flow_keys));

-- name: FlowKeyDelete :exec
DELETE FROM leasegen_flow_keys WHERE task_type = ? AND flow_key = ?;

-- name: FlowTasksWait :execrows
-- The tasks a keyed enqueue inserted, QUEUED and not yet committed, wait
-- for their key's slots instead. A task an idempotency key deduplicated
-- to (keyed, started or finished already) is left as it is.
UPDATE leasegen_tasks SET flow_key = sqlc.arg(flow_key), status = 'WAITING', due_priority = 0
WHERE id IN (sqlc.slice(ids)) AND flow_key IS NULL AND status = 'QUEUED' AND attempt = 0;

-- name: FlowKeysHolders :many
-- The keys' tasks that hold a slot, or do when their key blocks on
-- failure (FAILED). A locking read: it sees what committed last even in a
-- caller's REPEATABLE READ transaction. The index is forced: on a table
-- filled since its statistics were taken, MariaDB read every task of the
-- type through leasegen_tasks_key instead.
SELECT flow_key, CAST(SUM(status <> 'FAILED') AS SIGNED) AS active, CAST(SUM(status = 'FAILED') AS SIGNED) AS failed,
  CAST(SUM(status = 'QUEUED') AS SIGNED) AS queued
FROM leasegen_tasks FORCE INDEX (leasegen_tasks_flow)
WHERE flow_key IN (sqlc.slice(flow_keys)) AND task_type = sqlc.arg(task_type)
  AND flow_state = 'HOLDING'
GROUP BY flow_key
LOCK IN SHARE MODE;

-- name: FlowTasksQueue :execrows
-- Gives the waiting tasks a release picked (sqlbuild.FirstWaiting) their
-- keys' slots. A fairness key's tasks are due from now, at the back of
-- the queue, and marked (flow_slot -1) so that their starts release the
-- key again.
UPDATE leasegen_tasks SET
  status = 'QUEUED',
  flow_slot = IF(sqlc.arg(fair), -1, NULL),
  available_at = IF(sqlc.arg(fair), GREATEST(available_at, NOW(3)), available_at),
  due_priority = priority,
  due_at = available_at,
  updated_at = NOW(3)
WHERE id IN (sqlc.slice(ids)) AND flow_state = 'WAITING';

-- name: FlowKeysStalled :many
-- Keys with a task waiting and a slot free: what no release handed on (its
-- worker died between a task's end and the release, or an operator
-- removed a holder).
SELECT k.task_type, k.flow_key FROM leasegen_flow_keys k
WHERE EXISTS (
    SELECT 1 FROM leasegen_tasks w FORCE INDEX (leasegen_tasks_flow)
    WHERE w.flow_key = k.flow_key AND w.task_type = k.task_type AND w.flow_state = 'WAITING')
  AND k.key_limit > (
    SELECT COUNT(*) FROM leasegen_tasks h FORCE INDEX (leasegen_tasks_flow)
    WHERE h.flow_key = k.flow_key AND h.task_type = k.task_type
      AND h.flow_state = 'HOLDING' AND h.status <> 'FAILED') + IF(k.blocking, (SELECT COUNT(*) FROM leasegen_tasks f FORCE INDEX (leasegen_tasks_flow) WHERE f.flow_key = k.flow_key AND f.task_type = k.task_type AND f.flow_state = 'HOLDING' AND f.status = 'FAILED'), 0)
  AND (k.rate_limit = 0 OR k.rate_limit > (
    SELECT COUNT(*) FROM leasegen_tasks b FORCE INDEX (leasegen_tasks_flow)
    WHERE b.flow_key = k.flow_key AND b.task_type = k.task_type AND b.flow_state = 'HOLDING' AND b.status = 'QUEUED' AND b.flow_slot IS NOT NULL))
  AND (k.queue_limit = 0 OR k.queue_limit > (
    SELECT COUNT(*) FROM leasegen_tasks q FORCE INDEX (leasegen_tasks_flow)
    WHERE q.flow_key = k.flow_key AND q.task_type = k.task_type AND q.flow_state = 'HOLDING' AND q.status = 'QUEUED'))
LIMIT ?;

-- name: FlowKeyList :many
-- The keys with tasks in flight, with their running and waiting tasks,
-- and the slots of their rate in use: started within the last window, or
-- held by a queued task.
SELECT k.task_type, k.flow_key, k.key_limit, k.blocking, k.rate_limit, k.rate_window_us, k.queue_limit,
  (SELECT COUNT(*) FROM leasegen_flow_slots s
   WHERE s.task_type = k.task_type AND s.flow_key = k.flow_key
     AND (s.free_at > NOW(3) OR EXISTS (
       SELECT 1 FROM leasegen_tasks b FORCE INDEX (leasegen_tasks_flow)
       WHERE b.flow_key = s.flow_key AND b.task_type = s.task_type AND b.flow_state = 'HOLDING' AND b.status = 'QUEUED' AND b.flow_slot = s.slot))) AS in_window,
  (SELECT COUNT(*) FROM leasegen_tasks r FORCE INDEX (leasegen_tasks_flow)
   WHERE r.flow_key = k.flow_key AND r.task_type = k.task_type
     AND r.flow_state = 'HOLDING' AND r.status IN ('RUNNING', 'CANCEL_REQUESTED')) AS running,
  (SELECT COUNT(*) FROM leasegen_tasks h FORCE INDEX (leasegen_tasks_flow)
   WHERE h.flow_key = k.flow_key AND h.task_type = k.task_type
     AND h.flow_state = 'HOLDING' AND h.status <> 'FAILED') + IF(k.blocking, (SELECT COUNT(*) FROM leasegen_tasks f FORCE INDEX (leasegen_tasks_flow) WHERE f.flow_key = k.flow_key AND f.task_type = k.task_type AND f.flow_state = 'HOLDING' AND f.status = 'FAILED'), 0) AS holding,
  (SELECT COUNT(*) FROM leasegen_tasks w FORCE INDEX (leasegen_tasks_flow)
   WHERE w.flow_key = k.flow_key AND w.task_type = k.task_type AND w.flow_state = 'WAITING') AS waiting
FROM leasegen_flow_keys k
ORDER BY k.task_type, k.flow_key
LIMIT ?;

-- name: FlowSlotsPending :many
-- The rate slots of keys that their QUEUED tasks took and have not used
-- yet: a locking read, as FlowKeysHolders.
SELECT flow_key, CAST(flow_slot AS SIGNED) AS flow_slot
FROM leasegen_tasks FORCE INDEX (leasegen_tasks_flow)
WHERE flow_key IN (sqlc.slice(flow_keys)) AND task_type = sqlc.arg(task_type)
  AND flow_state = 'HOLDING' AND status = 'QUEUED' AND flow_slot IS NOT NULL
LOCK IN SHARE MODE;

-- name: FlowSlotsGet :many
-- The stored rate slots of keys, with when each may start a task again.
SELECT flow_key, slot, free_at FROM leasegen_flow_slots
WHERE task_type = sqlc.arg(task_type) AND flow_key IN (sqlc.slice(flow_keys))
LOCK IN SHARE MODE;

-- name: FlowSlotUpsert :exec
-- Stores a slot a release hands to a task, with its rate's window, and
-- makes it free no earlier than now: what prunes slots (FlowSlotsPrune)
-- then leaves it alone, and a task that leaves it unused (cancelled
-- while queued) keeps the instant it was free again.
INSERT INTO leasegen_flow_slots (task_type, flow_key, slot, window_us, free_at)
VALUES (sqlc.arg(task_type), sqlc.arg(flow_key), sqlc.arg(slot), sqlc.arg(window_us), NOW(3))
ON DUPLICATE KEY UPDATE window_us = sqlc.arg(window_us), free_at = GREATEST(COALESCE(free_at, NOW(3)), NOW(3));

-- name: FlowTaskQueueInSlot :execrows
-- Gives a waiting task a slot of its key's concurrency and of its rate:
-- it becomes due when the rate slot is free again, at the earliest.
UPDATE leasegen_tasks SET
  status = 'QUEUED',
  flow_slot = sqlc.arg(flow_slot),
  available_at = GREATEST(available_at, COALESCE(sqlc.narg(free_at), available_at), IF(sqlc.arg(fair), NOW(3), available_at)),
  due_priority = priority,
  due_at = available_at,
  updated_at = NOW(3)
WHERE id = sqlc.arg(id) AND flow_state = 'WAITING';

-- name: FlowSlotsStart :execrows
-- In a claim: the rate slots of the claimed tasks are free again a window
-- after this start.
UPDATE leasegen_flow_slots s
JOIN leasegen_tasks t ON s.task_type = t.task_type AND s.flow_key = t.flow_key AND s.slot = t.flow_slot
SET s.free_at = NOW(3) + INTERVAL s.window_us MICROSECOND
WHERE t.id IN (sqlc.slice(ids));

-- name: FlowSlotsPrune :execrows
-- Deletes the free slots of keys that no QUEUED task holds, which a
-- release finds free when missing just as when stored.
DELETE FROM leasegen_flow_slots
WHERE flow_key <> '' AND free_at < NOW(3) - INTERVAL 1 MINUTE
  AND NOT EXISTS (
    SELECT 1 FROM leasegen_tasks b FORCE INDEX (leasegen_tasks_flow)
    WHERE b.flow_key = leasegen_flow_slots.flow_key AND b.task_type = leasegen_flow_slots.task_type
      AND b.flow_state = 'HOLDING' AND b.status = 'QUEUED' AND b.flow_slot = leasegen_flow_slots.slot)
LIMIT ?;

-- name: RateSlotsTake :many
-- In a claim: up to lim free slots of a task type's rate, skipping those
-- another claim holds.
SELECT slot FROM leasegen_flow_slots
WHERE task_type = sqlc.arg(task_type) AND flow_key = '' AND slot < sqlc.arg(rate_limit)
  AND (free_at IS NULL OR free_at <= NOW(3))
LIMIT ?
FOR UPDATE SKIP LOCKED;

-- name: RateSlotsStart :exec
-- In a claim: the type's slots it used are free again a window after
-- this start.
UPDATE leasegen_flow_slots SET free_at = NOW(3) + INTERVAL window_us MICROSECOND
WHERE task_type = sqlc.arg(task_type) AND flow_key = '' AND slot IN (sqlc.slice(slots));

