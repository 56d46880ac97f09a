-- Queries on leasegen_workers: a row per live worker.

-- name: WorkerLockRegistry :exec
-- Serializes Worker.Start: the empty scope's row, locked until commit,
-- and written so that Galera certifies it (see LimitLock).
UPDATE leasegen_limits SET version = version + 1 WHERE scope = '';

-- name: WorkerDeleteExpired :exec
DELETE FROM leasegen_workers WHERE alive_until <= NOW(3);

-- name: WorkerListLive :many
SELECT * FROM leasegen_workers WHERE alive_until > NOW(3) ORDER BY worker_id;

-- name: WorkerInsert :execrows
-- 0 when the row exists: Start checked under the registry lock that it
-- does not; a renewal that found its row gone inserts it again.
INSERT IGNORE INTO leasegen_workers
  (worker_id, host, pid, started_at, alive_until, max_concurrency, global_limit, task_limits, schedules)
VALUES (sqlc.arg(worker_id), sqlc.arg(host), sqlc.arg(pid), NOW(3), NOW(3) + INTERVAL sqlc.arg(ttl_us) MICROSECOND,
  sqlc.arg(max_concurrency), sqlc.arg(global_limit), sqlc.arg(task_limits), sqlc.arg(schedules));

-- name: WorkerRenew :execrows
-- Counts changed rows: 0 also when the row already held this expiry (a
-- renewal within the millisecond of the last one); WorkerExists tells.
UPDATE leasegen_workers SET alive_until = NOW(3) + INTERVAL sqlc.arg(ttl_us) MICROSECOND
WHERE worker_id = sqlc.arg(worker_id);

-- name: WorkerExists :one
SELECT COUNT(*) FROM leasegen_workers WHERE worker_id = ?;

-- name: WorkerDelete :exec
DELETE FROM leasegen_workers WHERE worker_id = ?;
