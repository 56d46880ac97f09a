-- Queries on concurrency keys (see queries/mysql/flow_keys.sql). The
-- partial index leasegen_tasks_flow holds the keyed tasks. A count in
-- READ COMMITTED sees what committed before the key's row was locked; in
-- a caller's REPEATABLE READ transaction, locking a row another
-- transaction changed since the snapshot fails with a serialization error
-- instead.

-- name: FlowKeyUpsert :exec
INSERT INTO leasegen_flow_keys (task_type, flow_key, key_limit, blocking, version)
VALUES (@task_type, @flow_key, @key_limit, @blocking, 1)
ON CONFLICT (task_type, flow_key) DO UPDATE
SET key_limit = EXCLUDED.key_limit, blocking = EXCLUDED.blocking, version = leasegen_flow_keys.version + 1;

-- name: FlowKeysLock :execrows
UPDATE leasegen_flow_keys SET version = version + 1
WHERE task_type = @task_type AND flow_key = ANY(@flow_keys::text[]);

-- name: FlowKeysGet :many
SELECT flow_key, key_limit, blocking FROM leasegen_flow_keys
WHERE task_type = @task_type AND flow_key = ANY(@flow_keys::text[]);

-- name: FlowKeyDelete :exec
DELETE FROM leasegen_flow_keys WHERE task_type = $1 AND flow_key = $2;

-- name: FlowTasksWait :execrows
UPDATE leasegen_tasks SET flow_key = @flow_key, status = 'WAITING'
WHERE id = ANY(@ids::bigint[]) AND flow_key IS NULL AND status = 'QUEUED' AND attempt = 0;

-- name: FlowKeysHolders :many
SELECT flow_key::text AS flow_key,
  COUNT(*) FILTER (WHERE status <> 'FAILED') AS active,
  COUNT(*) FILTER (WHERE status = 'FAILED') AS failed
FROM leasegen_tasks
WHERE flow_key = ANY(@flow_keys::text[]) AND task_type = @task_type
  AND status IN ('QUEUED', 'RUNNING', 'CANCEL_REQUESTED', 'FAILED')
GROUP BY flow_key;

-- name: FlowKeyPromote :execrows
UPDATE leasegen_tasks SET status = 'QUEUED', updated_at = now()
WHERE id IN (
  SELECT w.id FROM leasegen_tasks w
  WHERE w.flow_key = @flow_key AND w.task_type = @task_type AND w.status = 'WAITING'
  ORDER BY w.id
  LIMIT sqlc.arg('limit')
);

-- name: FlowKeysStalled :many
SELECT k.task_type, k.flow_key FROM leasegen_flow_keys k
WHERE EXISTS (
    SELECT 1 FROM leasegen_tasks w
    WHERE w.flow_key = k.flow_key AND w.task_type = k.task_type AND w.status = 'WAITING')
  AND k.key_limit > (
    SELECT COUNT(*) FROM leasegen_tasks h
    WHERE h.flow_key = k.flow_key AND h.task_type = k.task_type
      AND h.status IN ('QUEUED', 'RUNNING', 'CANCEL_REQUESTED', CASE WHEN k.blocking THEN 'FAILED' ELSE 'QUEUED' END))
LIMIT $1;

-- name: FlowKeyList :many
SELECT k.task_type, k.flow_key, k.key_limit, k.blocking,
  (SELECT COUNT(*) FROM leasegen_tasks r
   WHERE r.flow_key = k.flow_key AND r.task_type = k.task_type
     AND r.status IN ('RUNNING', 'CANCEL_REQUESTED')) AS running,
  (SELECT COUNT(*) FROM leasegen_tasks h
   WHERE h.flow_key = k.flow_key AND h.task_type = k.task_type
     AND h.status IN ('QUEUED', 'RUNNING', 'CANCEL_REQUESTED', CASE WHEN k.blocking THEN 'FAILED' ELSE 'QUEUED' END)) AS holding,
  (SELECT COUNT(*) FROM leasegen_tasks w
   WHERE w.flow_key = k.flow_key AND w.task_type = k.task_type AND w.status = 'WAITING') AS waiting
FROM leasegen_flow_keys k
ORDER BY k.task_type, k.flow_key
LIMIT $1;
