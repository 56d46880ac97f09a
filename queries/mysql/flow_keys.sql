-- Queries on concurrency keys: leasegen_flow_keys' rows and the slots of
-- the keyed tasks (migrations/mysql/0014_flow_keys.sql). A task holds a
-- slot of its key while QUEUED, RUNNING or CANCEL_REQUESTED, and while
-- FAILED when its key blocks on failure; it waits in WAITING for one.

-- name: FlowKeyUpsert :exec
-- Creates a key's row with its limit, or sets the stored row's; the row
-- stays locked until the transaction ends.
INSERT INTO leasegen_flow_keys (task_type, flow_key, key_limit, blocking, version)
VALUES (sqlc.arg(task_type), sqlc.arg(flow_key), sqlc.arg(key_limit), sqlc.arg(blocking), 1)
ON DUPLICATE KEY UPDATE key_limit = sqlc.arg(key_limit), blocking = sqlc.arg(blocking), version = version + 1;

-- name: FlowKeysLock :execrows
-- Locks keys' rows by writing them (Galera certifies written rows only),
-- in key order.
UPDATE leasegen_flow_keys SET version = version + 1
WHERE task_type = sqlc.arg(task_type) AND flow_key IN (sqlc.slice(flow_keys))
ORDER BY flow_key;

-- name: FlowKeysGet :many
SELECT flow_key, key_limit, blocking FROM leasegen_flow_keys
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
SELECT flow_key, CAST(SUM(flow_status <> 'FAILED') AS SIGNED) AS active, CAST(SUM(flow_status = 'FAILED') AS SIGNED) AS failed
FROM leasegen_tasks FORCE INDEX (leasegen_tasks_flow)
WHERE flow_key IN (sqlc.slice(flow_keys)) AND task_type = sqlc.arg(task_type)
  AND flow_status IN ('QUEUED', 'RUNNING', 'CANCEL_REQUESTED', 'FAILED')
GROUP BY flow_key
LOCK IN SHARE MODE;

-- name: FlowTasksQueue :execrows
-- Gives the waiting tasks a release picked (sqlbuild.FirstWaiting) their
-- keys' slots.
UPDATE leasegen_tasks SET
  status = 'QUEUED',
  due_priority = priority,
  due_at = available_at,
  updated_at = NOW(3)
WHERE id IN (sqlc.slice(ids)) AND flow_status = 'WAITING';

-- name: FlowKeysStalled :many
-- Keys with a task waiting and a slot free: what no release handed on (its
-- worker died between a task's end and the release, or an operator
-- removed a holder).
SELECT k.task_type, k.flow_key FROM leasegen_flow_keys k
WHERE EXISTS (
    SELECT 1 FROM leasegen_tasks w FORCE INDEX (leasegen_tasks_flow)
    WHERE w.flow_key = k.flow_key AND w.task_type = k.task_type AND w.flow_status = 'WAITING')
  AND k.key_limit > (
    SELECT COUNT(*) FROM leasegen_tasks h FORCE INDEX (leasegen_tasks_flow)
    WHERE h.flow_key = k.flow_key AND h.task_type = k.task_type
      AND h.flow_status IN ('QUEUED', 'RUNNING', 'CANCEL_REQUESTED')) + IF(k.blocking, (SELECT COUNT(*) FROM leasegen_tasks f FORCE INDEX (leasegen_tasks_flow) WHERE f.flow_key = k.flow_key AND f.task_type = k.task_type AND f.flow_status = 'FAILED'), 0)
LIMIT ?;

-- name: FlowKeyList :many
-- The keys with tasks in flight, with their running and waiting tasks.
SELECT k.task_type, k.flow_key, k.key_limit, k.blocking,
  (SELECT COUNT(*) FROM leasegen_tasks r FORCE INDEX (leasegen_tasks_flow)
   WHERE r.flow_key = k.flow_key AND r.task_type = k.task_type
     AND r.flow_status IN ('RUNNING', 'CANCEL_REQUESTED')) AS running,
  (SELECT COUNT(*) FROM leasegen_tasks h FORCE INDEX (leasegen_tasks_flow)
   WHERE h.flow_key = k.flow_key AND h.task_type = k.task_type
     AND h.flow_status IN ('QUEUED', 'RUNNING', 'CANCEL_REQUESTED')) + IF(k.blocking, (SELECT COUNT(*) FROM leasegen_tasks f FORCE INDEX (leasegen_tasks_flow) WHERE f.flow_key = k.flow_key AND f.task_type = k.task_type AND f.flow_status = 'FAILED'), 0) AS holding,
  (SELECT COUNT(*) FROM leasegen_tasks w FORCE INDEX (leasegen_tasks_flow)
   WHERE w.flow_key = k.flow_key AND w.task_type = k.task_type AND w.flow_status = 'WAITING') AS waiting
FROM leasegen_flow_keys k
ORDER BY k.task_type, k.flow_key
LIMIT ?;
