-- Queries on leasegen_idempotency_keys: the keys whose work committed.

-- name: IdempotencyKeyRecord :execrows
-- 1 when the key is new; 0 when a committed task already holds it (a
-- concurrent holder's insert makes this wait until that one commits or
-- rolls back).
INSERT INTO leasegen_idempotency_keys (task_type, idem_key, task_id, created_at)
VALUES ($1, $2, $3, now())
ON CONFLICT DO NOTHING;

-- name: IdempotencyKeyHolder :one
SELECT task_id FROM leasegen_idempotency_keys WHERE task_type = $1 AND idem_key = $2;

-- name: IdempotencyKeyTasks :many
-- The tasks whose committed work recorded a key, of any type.
SELECT task_id FROM leasegen_idempotency_keys WHERE idem_key = @idem_key ORDER BY task_id DESC LIMIT sqlc.arg('limit');

-- name: IdempotencyKeyOfTask :many
-- The key a task's committed work recorded: none, or one.
SELECT idem_key FROM leasegen_idempotency_keys WHERE task_id = $1;
