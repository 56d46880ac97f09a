-- Queries on concurrency keys (see queries/mysql/flow_keys.sql). The
-- partial index leasegen_tasks_flow holds the keyed tasks. A count in
-- READ COMMITTED sees what committed before the key's row was locked; in
-- a caller's REPEATABLE READ transaction, locking a row another
-- transaction changed since the snapshot fails with a serialization error
-- instead.

-- name: FlowKeysUpsert :exec
-- Creates the keys' rows with their limits, or sets the stored rows',
-- in the arrays' order (the lock order); the rows stay locked until the
-- transaction ends.
INSERT INTO leasegen_flow_keys (task_type, flow_key, key_limit, blocking, version)
SELECT k.task_type, k.flow_key, k.key_limit, k.blocking, 1
FROM (
  SELECT unnest(@task_types::text[]) AS task_type, unnest(@flow_keys::text[]) AS flow_key,
         unnest(@key_limits::integer[]) AS key_limit, unnest(@blockings::boolean[]) AS blocking
) AS k
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
-- One statement for a whole enqueue: task ids[i] waits for key
-- flow_keys[i].
UPDATE leasegen_tasks t SET flow_key = w.flow_key, status = 'WAITING'
FROM (SELECT unnest(@ids::bigint[]) AS id, unnest(@flow_keys::text[]) AS flow_key) AS w
WHERE t.id = w.id AND t.flow_key IS NULL AND t.status = 'QUEUED' AND t.attempt = 0;

-- name: FlowKeysHolders :many
SELECT flow_key::text AS flow_key,
  COUNT(*) FILTER (WHERE status <> 'FAILED') AS active,
  COUNT(*) FILTER (WHERE status = 'FAILED') AS failed
FROM leasegen_tasks
WHERE flow_key = ANY(@flow_keys::text[]) AND task_type = @task_type
  AND status IN ('QUEUED', 'RUNNING', 'CANCEL_REQUESTED', 'FAILED')
GROUP BY flow_key;

-- name: FlowTasksQueue :execrows
UPDATE leasegen_tasks SET status = 'QUEUED', updated_at = now()
WHERE id = ANY(@ids::bigint[]) AND status = 'WAITING';

-- name: FlowKeysStalled :many
SELECT k.task_type, k.flow_key FROM leasegen_flow_keys k
WHERE EXISTS (
    SELECT 1 FROM leasegen_tasks w
    WHERE w.flow_key = k.flow_key AND w.task_type = k.task_type AND w.status = 'WAITING')
  AND k.key_limit > (
    SELECT COUNT(*) FROM leasegen_tasks h
    WHERE h.flow_key = k.flow_key AND h.task_type = k.task_type
      AND h.status IN ('QUEUED', 'RUNNING', 'CANCEL_REQUESTED')) + CASE WHEN k.blocking THEN (SELECT COUNT(*) FROM leasegen_tasks f WHERE f.flow_key = k.flow_key AND f.task_type = k.task_type AND f.status = 'FAILED') ELSE 0 END
LIMIT $1;

-- name: FlowKeyList :many
SELECT k.task_type, k.flow_key, k.key_limit, k.blocking,
  (SELECT COUNT(*) FROM leasegen_tasks r
   WHERE r.flow_key = k.flow_key AND r.task_type = k.task_type
     AND r.status IN ('RUNNING', 'CANCEL_REQUESTED')) AS running,
  (SELECT COUNT(*) FROM leasegen_tasks h
   WHERE h.flow_key = k.flow_key AND h.task_type = k.task_type
     AND h.status IN ('QUEUED', 'RUNNING', 'CANCEL_REQUESTED')) + CASE WHEN k.blocking THEN (SELECT COUNT(*) FROM leasegen_tasks f WHERE f.flow_key = k.flow_key AND f.task_type = k.task_type AND f.status = 'FAILED') ELSE 0 END AS holding,
  (SELECT COUNT(*) FROM leasegen_tasks w
   WHERE w.flow_key = k.flow_key AND w.task_type = k.task_type AND w.status = 'WAITING') AS waiting
FROM leasegen_flow_keys k
ORDER BY k.task_type, k.flow_key
LIMIT $1;
