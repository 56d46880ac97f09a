-- Queries on leasegen_counts and leasegen_count_turn: the last count of
-- every task by type and status, and whose turn it is to count.

-- name: CountTurnTake :execrows
-- 1 for the worker whose turn it is: next_at has passed. It holds the turn
-- for hold_us, after which another worker may count if this one did not.
UPDATE leasegen_count_turn SET next_at = NOW(3) + INTERVAL sqlc.arg(hold_us) MICROSECOND
WHERE id = 1 AND next_at <= NOW(3);

-- name: CountTurnDone :exec
UPDATE leasegen_count_turn
SET counted_at = sqlc.arg(counted_at), took_us = sqlc.arg(took_us), next_at = NOW(3) + INTERVAL sqlc.arg(wait_us) MICROSECOND
WHERE id = 1;

-- name: CountTurnGet :one
SELECT counted_at, took_us, next_at FROM leasegen_count_turn WHERE id = 1;

-- name: CountsDelete :exec
DELETE FROM leasegen_counts;

-- name: CountsInsert :exec
INSERT INTO leasegen_counts (task_type, status, tasks) VALUES (?, ?, ?);

-- name: CountsList :many
SELECT task_type, status, tasks FROM leasegen_counts ORDER BY task_type, status;
