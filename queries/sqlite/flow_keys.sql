-- Queries on concurrency keys (see queries/mysql/flow_keys.sql). SQLite
-- runs one writing transaction at a time, so a count after the key row is
-- written sees every committed change. An argument after a sqlc.slice
-- would be numbered wrong (sqlc numbers it as if the slice were one
-- argument): the slices come last.

-- name: FlowKeyUpsert :exec
INSERT INTO leasegen_flow_keys (task_type, flow_key, key_limit, blocking, version)
VALUES (sqlc.arg(task_type), sqlc.arg(flow_key), sqlc.arg(key_limit), sqlc.arg(blocking), 1)
ON CONFLICT (task_type, flow_key) DO UPDATE
SET key_limit = EXCLUDED.key_limit, blocking = EXCLUDED.blocking, version = leasegen_flow_keys.version + 1;

-- name: FlowKeysLock :execrows
UPDATE leasegen_flow_keys SET version = version + 1
WHERE task_type = sqlc.arg(task_type) AND flow_key IN (sqlc.slice(flow_keys));

-- name: FlowKeysGet :many
SELECT flow_key, key_limit, blocking FROM leasegen_flow_keys
WHERE task_type = sqlc.arg(task_type) AND flow_key IN (sqlc.slice(flow_keys));

-- name: FlowKeyDelete :exec
DELETE FROM leasegen_flow_keys WHERE task_type = ? AND flow_key = ?;

-- name: FlowTasksWait :execrows
UPDATE leasegen_tasks SET flow_key = sqlc.arg(flow_key), status = 'WAITING'
WHERE id IN (sqlc.slice(ids)) AND flow_key IS NULL AND status = 'QUEUED' AND attempt = 0;

-- name: FlowKeysHolders :many
SELECT CAST(flow_key AS TEXT) AS flow_key,
  CAST(SUM(status <> 'FAILED') AS INTEGER) AS active,
  CAST(SUM(status = 'FAILED') AS INTEGER) AS failed
FROM leasegen_tasks
WHERE task_type = sqlc.arg(task_type) AND flow_key IN (sqlc.slice(flow_keys))
  AND status IN ('QUEUED', 'RUNNING', 'CANCEL_REQUESTED', 'FAILED')
GROUP BY flow_key;

-- name: FlowTasksQueue :execrows
UPDATE leasegen_tasks SET status = 'QUEUED', due_at = available_at, updated_at = (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER))
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
LIMIT ?;

-- name: FlowKeyList :many
SELECT k.task_type, k.flow_key, k.key_limit, k.blocking,
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
