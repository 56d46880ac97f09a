-- Queries on leasegen_idempotency_keys: the keys whose work committed.

-- name: IdempotencyKeyRecord :execrows
-- 1 when the key is new; 0 when a committed task already holds it (a
-- concurrent holder's insert makes this wait until that one commits or
-- rolls back).
INSERT IGNORE INTO leasegen_idempotency_keys (task_type, idem_key, task_id, created_at)
VALUES (?, ?, ?, NOW(3));

-- name: IdempotencyKeyHolder :one
-- The task whose committed execution recorded the key.
SELECT task_id FROM leasegen_idempotency_keys WHERE task_type = ? AND idem_key = ?;

-- name: IdempotencyKeyTasks :many
-- The tasks whose committed work recorded a key, of any type.
SELECT task_id FROM leasegen_idempotency_keys WHERE idem_key = ? ORDER BY task_id DESC LIMIT ?;

-- name: IdempotencyKeyOfTask :many
-- The key a task's committed work recorded: none, or one.
SELECT idem_key FROM leasegen_idempotency_keys WHERE task_id = ?;
