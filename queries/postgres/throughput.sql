-- Queries on leasegen_throughput: finished tasks per minute.

-- name: ThroughputLastCounted :one
-- The latest minute counted, or the epoch when none is.
SELECT COALESCE(MAX(minute_at), 'epoch'::timestamptz)::timestamptz AS minute_at
FROM leasegen_throughput WHERE task_type = '';

-- name: ThroughputCount :many
-- The tasks that finished in [from_at, to_at), per type, outcome and minute
-- since the epoch: a range of the partial index leasegen_tasks_finished.
SELECT task_type, status, floor(extract(epoch FROM finished_at) / 60)::bigint AS minute, COUNT(*) AS tasks
FROM leasegen_tasks
WHERE status IN ('SUCCESS', 'FAILED', 'CANCELLED')
  AND finished_at >= sqlc.arg(from_at)::timestamptz AND finished_at < sqlc.arg(to_at)::timestamptz
GROUP BY task_type, status, minute;

-- name: ThroughputInsert :exec
-- A minute another worker counted first keeps its row.
INSERT INTO leasegen_throughput (task_type, minute_at, succeeded, failed, cancelled)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT DO NOTHING;

-- name: ThroughputTrim :exec
DELETE FROM leasegen_throughput WHERE minute_at < sqlc.arg(before)::timestamptz;

-- name: ThroughputList :many
-- The counted minutes from since on, over all types.
SELECT minute_at, succeeded, failed, cancelled FROM leasegen_throughput
WHERE task_type = '' AND minute_at >= sqlc.arg(since)::timestamptz
ORDER BY minute_at;
