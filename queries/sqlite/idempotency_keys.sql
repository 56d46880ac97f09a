-- Queries on leasegen_idempotency_keys: the keys whose work committed.

-- name: IdempotencyKeyRecord :execrows
INSERT INTO leasegen_idempotency_keys (task_type, idem_key, task_id, created_at)
VALUES (?, ?, ?, (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)))
ON CONFLICT DO NOTHING;

-- name: IdempotencyKeyHolder :one
-- The task whose committed execution recorded the key.
SELECT task_id FROM leasegen_idempotency_keys WHERE task_type = ? AND idem_key = ?;

-- name: IdempotencyKeyTasks :many
-- The tasks whose committed work recorded a key, of any type.
SELECT task_id FROM leasegen_idempotency_keys WHERE idem_key = ? ORDER BY task_id DESC LIMIT sqlc.arg('limit');

-- name: IdempotencyKeyOfTask :many
-- The key a task's committed work recorded: none, or one.
SELECT idem_key FROM leasegen_idempotency_keys WHERE task_id = ?;
