-- Queries on leasegen_idempotency_keys: the keys whose work committed.

-- name: IdempotencyKeyRecord :execrows
INSERT INTO leasegen_idempotency_keys (task_type, idem_key, task_id, created_at)
VALUES (?, ?, ?, (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)))
ON CONFLICT DO NOTHING;

-- name: IdempotencyKeyHolder :one
-- The task whose committed execution recorded the key.
SELECT task_id FROM leasegen_idempotency_keys WHERE task_type = ? AND idem_key = ?;
