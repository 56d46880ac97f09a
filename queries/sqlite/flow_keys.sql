-- Queries on concurrency keys (see queries/mysql/flow_keys.sql). SQLite
-- runs one writing transaction at a time, so a count after the key row is
-- written sees every committed change. An argument after a sqlc.slice
-- would be numbered wrong (sqlc numbers it as if the slice were one
-- argument): the slices come last.

-- name: FlowKeyUpsert :exec
INSERT INTO leasegen_flow_keys (task_type, flow_key, key_limit, blocking, rate_limit, rate_window_us, queue_limit, version)
VALUES (sqlc.arg(task_type), sqlc.arg(flow_key), sqlc.arg(key_limit), sqlc.arg(blocking), sqlc.arg(rate_limit), sqlc.arg(rate_window_us), sqlc.arg(queue_limit), 1)
ON CONFLICT (task_type, flow_key) DO UPDATE
SET key_limit = EXCLUDED.key_limit, blocking = EXCLUDED.blocking, rate_limit = EXCLUDED.rate_limit,
  rate_window_us = EXCLUDED.rate_window_us, queue_limit = EXCLUDED.queue_limit, version = leasegen_flow_keys.version + 1;

-- name: FlowKeysLock :execrows
UPDATE leasegen_flow_keys SET version = version + 1
WHERE task_type = sqlc.arg(task_type) AND flow_key IN (sqlc.slice(flow_keys));

-- name: FlowKeysGet :many
SELECT flow_key, key_limit, blocking, rate_limit, rate_window_us, queue_limit FROM leasegen_flow_keys
WHERE task_type = sqlc.arg(task_type) AND flow_key IN (sqlc.slice(flow_keys));

-- name: FlowKeyDelete :exec
DELETE FROM leasegen_flow_keys WHERE task_type = ? AND flow_key = ?;

-- name: FlowTasksWait :execrows
UPDATE leasegen_tasks SET flow_key = sqlc.arg(flow_key), status = 'WAITING'
WHERE id IN (sqlc.slice(ids)) AND flow_key IS NULL AND status = 'QUEUED' AND attempt = 0;

-- name: FlowKeysHolders :many
SELECT CAST(flow_key AS TEXT) AS flow_key,
  CAST(SUM(status <> 'FAILED') AS INTEGER) AS active,
  CAST(SUM(status = 'FAILED') AS INTEGER) AS failed,
  CAST(SUM(status = 'QUEUED') AS INTEGER) AS queued
FROM leasegen_tasks
WHERE task_type = sqlc.arg(task_type) AND flow_key IN (sqlc.slice(flow_keys))
  AND status IN ('QUEUED', 'RUNNING', 'CANCEL_REQUESTED', 'FAILED')
GROUP BY flow_key;

-- name: FlowTasksQueue :execrows
UPDATE leasegen_tasks SET
  status = 'QUEUED',
  flow_slot = IIF(sqlc.arg(fair), -1, NULL),
  available_at = IIF(sqlc.arg(fair), MAX(available_at, (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER))), available_at),
  due_at = IIF(sqlc.arg(fair), MAX(available_at, (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER))), available_at),
  updated_at = (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER))
WHERE status = 'WAITING' AND id IN (sqlc.slice(ids));

-- name: FlowKeysStalled :many
SELECT k.task_type, k.flow_key FROM leasegen_flow_keys k
WHERE EXISTS (
    SELECT 1 FROM leasegen_tasks w
    WHERE w.flow_key = k.flow_key AND w.task_type = k.task_type AND w.status = 'WAITING')
  AND k.key_limit > (
    SELECT COUNT(*) FROM leasegen_tasks h
    WHERE h.flow_key = k.flow_key AND h.task_type = k.task_type
      AND h.status IN ('QUEUED', 'RUNNING', 'CANCEL_REQUESTED')) + IIF(k.blocking, (SELECT COUNT(*) FROM leasegen_tasks f WHERE f.flow_key = k.flow_key AND f.task_type = k.task_type AND f.status = 'FAILED'), 0)
  AND (k.rate_limit = 0 OR k.rate_limit > (
    SELECT COUNT(*) FROM leasegen_tasks b
    WHERE b.flow_key = k.flow_key AND b.task_type = k.task_type AND b.status = 'QUEUED' AND b.flow_slot IS NOT NULL))
  AND (k.queue_limit = 0 OR k.queue_limit > (
    SELECT COUNT(*) FROM leasegen_tasks q
    WHERE q.flow_key = k.flow_key AND q.task_type = k.task_type AND q.status = 'QUEUED'))
LIMIT ?;

-- name: FlowKeyList :many
SELECT k.task_type, k.flow_key, k.key_limit, k.blocking, k.rate_limit, k.rate_window_us, k.queue_limit,
  (SELECT COUNT(*) FROM leasegen_flow_slots s
   WHERE s.task_type = k.task_type AND s.flow_key = k.flow_key
     AND (s.free_at > (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)) OR EXISTS (
       SELECT 1 FROM leasegen_tasks b
       WHERE b.flow_key = s.flow_key AND b.task_type = s.task_type AND b.status = 'QUEUED' AND b.flow_slot = s.slot))) AS in_window,
  (SELECT COUNT(*) FROM leasegen_tasks r
   WHERE r.flow_key = k.flow_key AND r.task_type = k.task_type
     AND r.status IN ('RUNNING', 'CANCEL_REQUESTED')) AS running,
  (SELECT COUNT(*) FROM leasegen_tasks h
   WHERE h.flow_key = k.flow_key AND h.task_type = k.task_type
     AND h.status IN ('QUEUED', 'RUNNING', 'CANCEL_REQUESTED')) + IIF(k.blocking, (SELECT COUNT(*) FROM leasegen_tasks f WHERE f.flow_key = k.flow_key AND f.task_type = k.task_type AND f.status = 'FAILED'), 0) AS holding,
  (SELECT COUNT(*) FROM leasegen_tasks w
   WHERE w.flow_key = k.flow_key AND w.task_type = k.task_type AND w.status = 'WAITING') AS waiting
FROM leasegen_flow_keys k
ORDER BY k.task_type, k.flow_key
LIMIT ?;

-- name: FlowSlotsPending :many
-- The rate slots of keys that their QUEUED tasks took and have not used
-- yet.
SELECT CAST(flow_key AS TEXT) AS flow_key, CAST(flow_slot AS INTEGER) AS flow_slot
FROM leasegen_tasks
WHERE task_type = sqlc.arg(task_type) AND flow_key IN (sqlc.slice(flow_keys))
  AND status = 'QUEUED' AND flow_slot IS NOT NULL;

-- name: FlowSlotsGet :many
-- The stored rate slots of keys, with when each may start a task again.
SELECT flow_key, slot, free_at FROM leasegen_flow_slots
WHERE task_type = sqlc.arg(task_type) AND flow_key IN (sqlc.slice(flow_keys));

-- name: FlowSlotUpsert :exec
-- Stores a slot a release hands to a task, with its rate's window, and
-- makes it free no earlier than now: what prunes slots (FlowSlotsPrune)
-- then leaves it alone, and a task that leaves it unused (cancelled
-- while queued) keeps the instant it was free again.
INSERT INTO leasegen_flow_slots (task_type, flow_key, slot, window_us, free_at)
VALUES (sqlc.arg(task_type), sqlc.arg(flow_key), sqlc.arg(slot), sqlc.arg(window_us), (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)))
ON CONFLICT (task_type, flow_key, slot) DO UPDATE
SET window_us = EXCLUDED.window_us, free_at = MAX(COALESCE(free_at, (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER))), (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)));

-- name: FlowTaskQueueInSlot :execrows
-- Gives a waiting task a slot of its key's concurrency and of its rate:
-- it becomes due when the rate slot is free again, at the earliest.
UPDATE leasegen_tasks SET
  status = 'QUEUED',
  flow_slot = sqlc.arg(flow_slot),
  available_at = MAX(available_at, COALESCE(sqlc.narg(free_at), available_at), IIF(sqlc.arg(fair), (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)), available_at)),
  due_at = MAX(available_at, COALESCE(sqlc.narg(free_at), available_at), IIF(sqlc.arg(fair), (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)), available_at)),
  updated_at = (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER))
WHERE id = sqlc.arg(id) AND status = 'WAITING';

-- name: FlowSlotsStart :execrows
-- In a claim: the rate slots of the claimed tasks are free again a window
-- after this start.
UPDATE leasegen_flow_slots SET free_at = (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)) + window_us / 1000
WHERE (task_type, flow_key, slot) IN (
  SELECT t.task_type, t.flow_key, t.flow_slot FROM leasegen_tasks t
  WHERE t.id IN (sqlc.slice(ids)) AND t.flow_slot IS NOT NULL);

-- name: FlowSlotsPrune :execrows
-- Deletes the free slots of keys that no QUEUED task holds, which a
-- release finds free when missing just as when stored.
DELETE FROM leasegen_flow_slots
WHERE rowid IN (
  SELECT p.rowid FROM leasegen_flow_slots p
  WHERE p.flow_key <> '' AND p.free_at < (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)) - 60000
    AND NOT EXISTS (
      SELECT 1 FROM leasegen_tasks b
      WHERE b.flow_key = p.flow_key AND b.task_type = p.task_type
        AND b.status = 'QUEUED' AND b.flow_slot = p.slot)
  LIMIT ?);

-- name: RateSlotsTake :many
-- In a claim: up to lim free slots of a task type's rate (the claim holds
-- the write lock).
SELECT slot FROM leasegen_flow_slots
WHERE task_type = sqlc.arg(task_type) AND flow_key = '' AND slot < sqlc.arg(rate_limit)
  AND (free_at IS NULL OR free_at <= (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)))
LIMIT sqlc.arg(lim);

-- name: RateSlotsStart :exec
-- In a claim: the type's slots it used are free again a window after
-- this start.
UPDATE leasegen_flow_slots SET free_at = (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)) + window_us / 1000
WHERE task_type = sqlc.arg(task_type) AND flow_key = '' AND slot IN (sqlc.slice(slots));

