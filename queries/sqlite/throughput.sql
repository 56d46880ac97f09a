-- Queries on leasegen_throughput: finished tasks per minute. Instants are
-- Unix milliseconds.

-- name: ThroughputLastCounted :one
-- The latest minute counted, or 0 when none is.
SELECT CAST(COALESCE(MAX(minute_at), 0) AS INTEGER) AS minute_at
FROM leasegen_throughput WHERE task_type = '';

-- name: ThroughputCount :many
-- The tasks that finished in [from_at, to_at), per type, outcome and minute
-- since the epoch: a range of the partial index leasegen_tasks_finished (a
-- finished task is due when it finished).
SELECT task_type, status, CAST(due_at / 60000 AS INTEGER) AS minute, COUNT(*) AS tasks
FROM leasegen_tasks
WHERE status IN ('SUCCESS', 'FAILED', 'CANCELLED')
  AND due_at >= sqlc.arg(from_at) AND due_at < sqlc.arg(to_at)
GROUP BY task_type, status, minute;

-- name: ThroughputInsert :exec
-- A minute another worker counted first keeps its row.
INSERT OR IGNORE INTO leasegen_throughput (task_type, minute_at, succeeded, failed, cancelled)
VALUES (?, ?, ?, ?, ?);

-- name: ThroughputTrim :exec
DELETE FROM leasegen_throughput WHERE minute_at < sqlc.arg(before);

-- name: ThroughputList :many
-- The counted minutes from since on, over all types.
SELECT minute_at, succeeded, failed, cancelled FROM leasegen_throughput
WHERE task_type = '' AND minute_at >= sqlc.arg(since)
ORDER BY minute_at;
