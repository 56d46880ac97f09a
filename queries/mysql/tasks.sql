-- name: TaskInsert :execlastid
-- An existing (task_type, idempotency_key) returns the existing row's id.
INSERT INTO leasegen_tasks (
  task_type, status, payload, priority, available_at, max_attempts,
  owner_id, idempotency_key, created_at, updated_at
) VALUES (
  sqlc.arg(task_type), 'QUEUED', sqlc.arg(payload), sqlc.arg(priority),
  COALESCE(sqlc.narg(run_at), NOW(3) + INTERVAL sqlc.arg(delay_us) MICROSECOND),
  sqlc.arg(max_attempts), sqlc.arg(owner_id), sqlc.narg(idempotency_key),
  NOW(3), NOW(3)
)
ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id);

-- name: TaskGet :one
SELECT * FROM leasegen_tasks WHERE id = ?;

-- name: TaskListByOwner :many
SELECT * FROM leasegen_tasks
WHERE owner_id = sqlc.arg(owner_id) AND status IN (sqlc.slice(statuses))
ORDER BY created_at DESC, id DESC
LIMIT ?;

-- name: TaskCancelRequest :execrows
-- QUEUED becomes CANCELLED at once; RUNNING becomes CANCEL_REQUESTED and its
-- worker learns it at the next heartbeat. A finished task's lease_until is
-- when it finished (leasegen_tasks_recover serves retention). Columns that
-- read the old status come before status.
UPDATE leasegen_tasks SET
  finished_at = IF(status = 'QUEUED', NOW(3), finished_at),
  lease_until = IF(status = 'QUEUED', NOW(3), lease_until),
  status = IF(status = 'QUEUED', 'CANCELLED', 'CANCEL_REQUESTED'),
  updated_at = NOW(3)
WHERE id = ? AND status IN ('QUEUED', 'RUNNING');

-- name: LimitEnsure :exec
INSERT IGNORE INTO leasegen_limits (scope) VALUES (?);

-- name: LimitLock :many
-- Serializes the claimers of limited scopes; held until the claim commits.
SELECT scope FROM leasegen_limits
WHERE scope IN (sqlc.slice(scopes))
ORDER BY scope
FOR UPDATE;

-- name: TaskCountRunning :many
-- Reads leasegen_tasks_queue alone: task_type follows its key.
SELECT task_type, COUNT(*) AS running FROM leasegen_tasks
WHERE status IN ('RUNNING', 'CANCEL_REQUESTED')
GROUP BY task_type;

-- name: TaskClaimCandidates :many
-- Walks leasegen_tasks_queue in index order, so concurrent claimers skip each
-- other's rows instead of locking everything a sort would read.
-- The rows come back with what an execution needs and the instant the claim
-- starts their lease, so no read-back is needed after the UPDATE.
SELECT id, task_type, payload, priority, available_at, attempt, free_attempts,
       max_attempts, owner_id, idempotency_key, NOW(3) AS claimed_at
FROM leasegen_tasks
WHERE status = 'QUEUED'
  AND task_type IN (sqlc.slice(task_types))
  AND available_at <= NOW(3)
ORDER BY priority DESC, available_at, id
LIMIT ?
FOR UPDATE SKIP LOCKED;

-- name: TaskClaimMark :exec
UPDATE leasegen_tasks SET
  status = 'RUNNING',
  attempt = attempt + 1,
  lease_owner = sqlc.arg(lease_owner),
  lease_until = NOW(3) + INTERVAL sqlc.arg(lease_us) MICROSECOND,
  started_at = NOW(3),
  updated_at = NOW(3)
WHERE id IN (sqlc.slice(ids));

-- name: TaskRenewMany :execrows
UPDATE leasegen_tasks SET
  lease_until = NOW(3) + INTERVAL sqlc.arg(lease_us) MICROSECOND,
  updated_at = NOW(3)
WHERE lease_owner = sqlc.arg(lease_owner)
  AND status IN ('RUNNING', 'CANCEL_REQUESTED')
  AND lease_until > NOW(3)
  AND id IN (sqlc.slice(ids));

-- name: TaskLeaseStates :many
-- Read back after TaskRenewMany: a row is still held by this worker when its
-- owner and attempt match and its lease is unexpired.
SELECT id, attempt, status, lease_owner,
       CAST(COALESCE(lease_until > NOW(3), FALSE) AS SIGNED) AS alive
FROM leasegen_tasks
WHERE id IN (sqlc.slice(ids));

-- name: TaskComplete :execrows
UPDATE leasegen_tasks SET
  finished_at = NOW(3),
  status = 'SUCCESS',
  result = sqlc.narg(result),
  lease_until = NOW(3),
  updated_at = NOW(3)
WHERE id = sqlc.arg(id)
  AND lease_owner = sqlc.arg(lease_owner)
  AND attempt = sqlc.arg(attempt)
  AND status IN ('RUNNING', 'CANCEL_REQUESTED')
  AND lease_until > NOW(3);

-- name: TaskFail :execrows
-- next_status is QUEUED (retry after backoff_us) or FAILED; a task whose
-- cancellation was requested ends CANCELLED either way. finished_at and
-- lease_until (a finished task's is when it finished) are set before status
-- so they read the old status under either assignment order.
UPDATE leasegen_tasks SET
  finished_at = IF(status = 'CANCEL_REQUESTED' OR sqlc.arg(next_status) = 'FAILED', NOW(3), NULL),
  lease_until = IF(status = 'CANCEL_REQUESTED' OR sqlc.arg(next_status) = 'FAILED', NOW(3), NULL),
  status = IF(status = 'CANCEL_REQUESTED', 'CANCELLED', sqlc.arg(next_status)),
  available_at = NOW(3) + INTERVAL sqlc.arg(backoff_us) MICROSECOND,
  last_error = sqlc.arg(last_error),
  updated_at = NOW(3)
WHERE id = sqlc.arg(id)
  AND lease_owner = sqlc.arg(lease_owner)
  AND attempt = sqlc.arg(attempt)
  AND status IN ('RUNNING', 'CANCEL_REQUESTED')
  AND lease_until > NOW(3);

-- name: TaskRelease :execrows
-- Snooze and shutdown release: back to QUEUED after delay_us without using an
-- attempt (free_attempts rises with attempt, so attempt stays a fencing token).
-- With no delay the task keeps its place in the queue.
UPDATE leasegen_tasks SET
  finished_at = IF(status = 'CANCEL_REQUESTED', NOW(3), NULL),
  lease_until = IF(status = 'CANCEL_REQUESTED', NOW(3), NULL),
  status = IF(status = 'CANCEL_REQUESTED', 'CANCELLED', 'QUEUED'),
  free_attempts = free_attempts + 1,
  available_at = IF(sqlc.arg(delay_us) = 0, available_at, NOW(3) + INTERVAL sqlc.arg(delay_us) MICROSECOND),
  updated_at = NOW(3)
WHERE id = sqlc.arg(id)
  AND lease_owner = sqlc.arg(lease_owner)
  AND attempt = sqlc.arg(attempt)
  AND status IN ('RUNNING', 'CANCEL_REQUESTED')
  AND lease_until > NOW(3);

-- name: TaskRecoverCandidates :many
SELECT id, status, attempt, free_attempts, max_attempts,
       CAST(TIMESTAMPDIFF(MICROSECOND, lease_until, NOW(3)) AS SIGNED) AS overdue_us
FROM leasegen_tasks
WHERE status IN ('RUNNING', 'CANCEL_REQUESTED')
  AND lease_until <= NOW(3)
LIMIT ?
FOR UPDATE SKIP LOCKED;

-- name: TaskRecoverMark :exec
-- Expired leases: CANCEL_REQUESTED ends CANCELLED; RUNNING goes back to QUEUED
-- while attempts remain, else FAILED. A requeued task keeps its available_at,
-- so it returns to its old place in the queue, not the back. Columns that
-- read the old status come before status; a finished task's lease_until is
-- when it finished.
UPDATE leasegen_tasks SET
  finished_at = IF(status = 'CANCEL_REQUESTED' OR attempt - free_attempts >= max_attempts, NOW(3), NULL),
  lease_until = IF(status = 'CANCEL_REQUESTED' OR attempt - free_attempts >= max_attempts, NOW(3), NULL),
  last_error = IF(status = 'CANCEL_REQUESTED', last_error,
                  CONCAT('lease expired: owner ', COALESCE(lease_owner, '?'), ', attempt ', attempt)),
  status = CASE
    WHEN status = 'CANCEL_REQUESTED' THEN 'CANCELLED'
    WHEN attempt - free_attempts < max_attempts THEN 'QUEUED'
    ELSE 'FAILED'
  END,
  updated_at = NOW(3)
WHERE id IN (sqlc.slice(ids))
  AND status IN ('RUNNING', 'CANCEL_REQUESTED')
  AND lease_until <= NOW(3);

-- name: IdempotencyKeyRecord :execrows
-- 1 when the key is new; 0 when a committed task already holds it (a
-- concurrent holder's insert makes this wait until that one commits or
-- rolls back).
INSERT IGNORE INTO leasegen_idempotency_keys (task_type, idem_key, task_id, created_at)
VALUES (?, ?, ?, NOW(3));

-- name: TaskCountByTypeStatus :many
-- Queue depth: an index-only scan of leasegen_tasks_queue.
SELECT task_type, status, COUNT(*) AS tasks FROM leasegen_tasks
GROUP BY status, task_type;

-- name: TaskOldestQueued :many
SELECT task_type, CAST(MIN(available_at) AS DATETIME(3)) AS oldest FROM leasegen_tasks
WHERE status = 'QUEUED'
GROUP BY task_type;

-- name: TaskRunningByOwner :many
SELECT COALESCE(lease_owner, '') AS owner, COUNT(*) AS tasks FROM leasegen_tasks
WHERE status IN ('RUNNING', 'CANCEL_REQUESTED')
GROUP BY lease_owner;

-- name: TaskList :many
-- Empty filters match everything; min_age_us keeps tasks created at least
-- that long ago.
SELECT * FROM leasegen_tasks
WHERE (sqlc.arg(status) = '' OR status = sqlc.arg(status))
  AND (sqlc.arg(task_type) = '' OR task_type = sqlc.arg(task_type))
  AND (sqlc.arg(owner_id) = '' OR owner_id = sqlc.arg(owner_id))
  AND created_at <= NOW(3) - INTERVAL sqlc.arg(min_age_us) MICROSECOND
ORDER BY id DESC
LIMIT ?;

-- name: TaskRetry :execrows
-- A FAILED or CANCELLED task runs again with all its attempts: free_attempts
-- catches up with attempt, which keeps rising as the fencing token.
UPDATE leasegen_tasks SET
  status = 'QUEUED',
  available_at = NOW(3),
  free_attempts = attempt,
  finished_at = NULL,
  lease_until = NULL,
  updated_at = NOW(3)
WHERE id = ? AND status IN ('FAILED', 'CANCELLED');

-- name: TaskPurge :execrows
-- One batch of finished tasks older than the cutoff, found through
-- leasegen_tasks_recover: a finished task's lease_until is when it finished.
DELETE FROM leasegen_tasks
WHERE status IN ('SUCCESS', 'FAILED', 'CANCELLED')
  AND lease_until < NOW(3) - INTERVAL sqlc.arg(age_us) MICROSECOND
LIMIT ?;

-- name: TaskClaimable :one
-- The idle poll: one look into leasegen_tasks_queue, no lock, no
-- transaction.
SELECT EXISTS (
  SELECT 1 FROM leasegen_tasks
  WHERE status = 'QUEUED'
    AND task_type IN (sqlc.slice(task_types))
    AND available_at <= NOW(3)
) AS claimable;

-- name: TaskLeasesExpired :one
-- A recovery pass looks first, without a transaction or locks: most find
-- nothing.
SELECT EXISTS (
  SELECT 1 FROM leasegen_tasks
  WHERE status IN ('RUNNING', 'CANCEL_REQUESTED')
    AND lease_until <= NOW(3)
) AS expired;
