-- Queries on leasegen_workers: a row per live worker.

-- The database's clock is (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)), see tasks.sql.

-- name: WorkerDeleteExpired :exec
DELETE FROM leasegen_workers WHERE alive_until <= (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER));

-- name: WorkerListLive :many
SELECT * FROM leasegen_workers WHERE alive_until > (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)) ORDER BY worker_id;

-- name: WorkerInsert :execrows
INSERT OR IGNORE INTO leasegen_workers
  (worker_id, host, pid, started_at, alive_until, max_concurrency, global_limit, task_limits, schedules)
VALUES (sqlc.arg(worker_id), sqlc.arg(host), sqlc.arg(pid), (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)),
  (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)) + sqlc.arg(ttl_ms),
  sqlc.arg(max_concurrency), sqlc.arg(global_limit), sqlc.arg(task_limits), sqlc.arg(schedules));

-- name: WorkerRenew :execrows
UPDATE leasegen_workers SET alive_until = (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)) + sqlc.arg(ttl_ms)
WHERE worker_id = sqlc.arg(worker_id);

-- name: WorkerExists :one
SELECT COUNT(*) FROM leasegen_workers WHERE worker_id = ?;

-- name: WorkerDelete :exec
DELETE FROM leasegen_workers WHERE worker_id = ?;
