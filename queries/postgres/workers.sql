-- Queries on leasegen_workers: a row per live worker.

-- name: WorkerLockRegistry :exec
-- Serializes Worker.Start: the empty scope's row, locked until commit.
SELECT scope FROM leasegen_limits WHERE scope = '' FOR UPDATE;

-- name: WorkerDeleteExpired :exec
DELETE FROM leasegen_workers WHERE alive_until <= now();

-- name: WorkerListLive :many
SELECT * FROM leasegen_workers WHERE alive_until > now() ORDER BY worker_id;

-- name: WorkerInsert :execrows
-- 0 when the row exists: Start checked under the registry lock that it
-- does not; a renewal that found its row gone inserts it again.
INSERT INTO leasegen_workers
  (worker_id, host, pid, started_at, alive_until, max_concurrency, global_limit, task_limits, schedules)
VALUES (@worker_id, @host, @pid, now(), now() + sqlc.arg(ttl_us)::bigint * interval '1 microsecond',
  @max_concurrency, @global_limit, @task_limits, @schedules)
ON CONFLICT DO NOTHING;

-- name: WorkerRenew :execrows
UPDATE leasegen_workers SET alive_until = now() + sqlc.arg(ttl_us)::bigint * interval '1 microsecond'
WHERE worker_id = @worker_id;

-- name: WorkerExists :one
SELECT COUNT(*) FROM leasegen_workers WHERE worker_id = $1;

-- name: WorkerDelete :exec
DELETE FROM leasegen_workers WHERE worker_id = $1;
