-- Queries on leasegen_counts and leasegen_count_turn (see queries/mysql).
-- Instants are Unix milliseconds.

-- name: CountTurnTake :execrows
UPDATE leasegen_count_turn SET next_at = (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)) + sqlc.arg(hold_ms)
WHERE id = 1 AND next_at <= (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER));

-- name: CountTurnDone :exec
UPDATE leasegen_count_turn
SET counted_at = sqlc.arg(counted_at), took_us = sqlc.arg(took_us),
    next_at = (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)) + sqlc.arg(wait_ms)
WHERE id = 1;

-- name: CountTurnGet :one
SELECT counted_at, took_us, next_at FROM leasegen_count_turn WHERE id = 1;

-- name: CountsDelete :exec
DELETE FROM leasegen_counts;

-- name: CountsInsert :exec
INSERT INTO leasegen_counts (task_type, status, tasks) VALUES (?, ?, ?);

-- name: CountsList :many
SELECT task_type, status, tasks FROM leasegen_counts ORDER BY task_type, status;
