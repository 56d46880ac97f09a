-- name: TaskInsert :execlastid
-- An existing (task_type, idempotency_key) returns the existing row's id.
-- A queued task is due when it becomes claimable, at its own priority.
INSERT INTO leasegen_tasks (
  task_type, status, payload, priority, due_priority, available_at, due_at,
  max_attempts, owner_id, idempotency_key, metadata, created_at, updated_at
) VALUES (
  sqlc.arg(task_type), 'QUEUED', sqlc.arg(payload), sqlc.arg(priority), sqlc.arg(priority),
  COALESCE(sqlc.narg(run_at), NOW(3) + INTERVAL sqlc.arg(delay_us) MICROSECOND),
  COALESCE(sqlc.narg(run_at), NOW(3) + INTERVAL sqlc.arg(delay_us) MICROSECOND),
  sqlc.arg(max_attempts), sqlc.arg(owner_id), sqlc.narg(idempotency_key),
  sqlc.narg(metadata), NOW(3), NOW(3)
)
ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id);

-- name: TaskTakeSnapshot :exec
-- The first read of an InnoDB table in a REPEATABLE READ transaction takes
-- its snapshot (insertSnapshot's, before the batch's INSERT).
SELECT 1 FROM leasegen_tasks LIMIT 1;

-- name: TaskIDsSince :many
-- A batch's ids, read back in the batch's transaction: a REPEATABLE READ
-- snapshot taken before the insert sees no other transaction's row at or
-- above the batch's first id (see insertSnapshot).
SELECT id FROM leasegen_tasks WHERE id >= sqlc.arg(first_id) ORDER BY id LIMIT ?;

-- name: TaskGet :one
SELECT * FROM leasegen_tasks WHERE id = ?;

-- name: TaskListByOwner :many
SELECT * FROM leasegen_tasks
WHERE owner_id = sqlc.arg(owner_id) AND status IN (sqlc.slice(statuses))
ORDER BY created_at DESC, id DESC
LIMIT ?;

-- name: TaskCancelRequest :execrows
-- QUEUED or WAITING becomes CANCELLED at once, due when it finished;
-- RUNNING becomes CANCEL_REQUESTED, still due when its lease ends, and its
-- worker learns it at the next heartbeat. Status comes last, as in
-- TaskFail.
UPDATE leasegen_tasks SET
  due_at = IF(status = 'RUNNING', due_at, NOW(3)),
  due_priority = 0,
  status = IF(status = 'RUNNING', 'CANCEL_REQUESTED', 'CANCELLED'),
  updated_at = NOW(3)
WHERE id = ? AND status IN ('QUEUED', 'WAITING', 'RUNNING');

-- name: TaskCountRunning :many
-- Reads leasegen_tasks_due alone: task_type follows its key.
SELECT task_type, COUNT(*) AS running FROM leasegen_tasks
WHERE status IN ('RUNNING', 'CANCEL_REQUESTED')
GROUP BY task_type;

-- name: TaskClaimScan :many
-- The first step of a claim: the next claimable tasks in claim order, by a
-- plain read of leasegen_tasks_due alone (a queued task's due_priority is
-- its priority and its due_at its available_at). It locks nothing, so it
-- steps over the index entries that recent claims left for purge at the
-- head of the queue at a fraction of what a locking read pays for each.
-- excluded names tasks an earlier round could not lock. task_types leaves
-- out the paused types (PausedTypeNames, read first in the claim's
-- transaction): MariaDB would look up every scanned row in
-- leasegen_paused_types, about 8% of a claim's time.
SELECT id FROM leasegen_tasks
WHERE status = 'QUEUED'
  AND task_type IN (sqlc.slice(task_types))
  AND due_at <= NOW(3)
  AND id NOT IN (sqlc.slice(excluded))
ORDER BY due_priority DESC, due_at, id
LIMIT ?;

-- name: TaskClaimLock :many
-- The second step: lock the scanned tasks by primary key, skipping those
-- another claim holds, and read what an execution needs with the instant
-- the claim starts their lease, so no read-back is needed after the
-- UPDATE. A task claimed since the scan no longer matches.
SELECT id, task_type, payload, priority, available_at, attempt, free_attempts,
       max_attempts, owner_id, idempotency_key, metadata, flow_key, flow_slot, NOW(3) AS claimed_at
FROM leasegen_tasks FORCE INDEX (PRIMARY)
WHERE id IN (sqlc.slice(ids))
  AND status = 'QUEUED'
  AND due_at <= NOW(3)
FOR UPDATE SKIP LOCKED;

-- name: TaskClaimMark :exec
-- A running task is due when its lease ends.
UPDATE leasegen_tasks SET
  status = 'RUNNING',
  attempt = attempt + 1,
  lease_owner = sqlc.arg(lease_owner),
  due_at = NOW(3) + INTERVAL sqlc.arg(lease_us) MICROSECOND,
  due_priority = 0,
  started_at = NOW(3),
  updated_at = NOW(3)
WHERE id IN (sqlc.slice(ids));

-- name: TaskRenewMany :execrows
UPDATE leasegen_tasks SET
  due_at = NOW(3) + INTERVAL sqlc.arg(lease_us) MICROSECOND,
  updated_at = NOW(3)
WHERE lease_owner = sqlc.arg(lease_owner)
  AND status IN ('RUNNING', 'CANCEL_REQUESTED')
  AND due_at > NOW(3)
  AND id IN (sqlc.slice(ids));

-- name: TaskLeaseStates :many
-- Read back after TaskRenewMany: a row is still held by this worker when its
-- owner and attempt match and its lease is unexpired.
SELECT id, attempt, status, lease_owner,
       CAST(due_at > NOW(3) AS SIGNED) AS alive
FROM leasegen_tasks
WHERE id IN (sqlc.slice(ids));

-- name: TaskComplete :execrows
-- A finished task is due when it finished (retention).
UPDATE leasegen_tasks SET
  status = 'SUCCESS',
  result = sqlc.narg(result),
  due_at = NOW(3),
  updated_at = NOW(3)
WHERE id = sqlc.arg(id)
  AND lease_owner = sqlc.arg(lease_owner)
  AND attempt = sqlc.arg(attempt)
  AND status IN ('RUNNING', 'CANCEL_REQUESTED')
  AND due_at > NOW(3);

-- name: TaskFail :execrows
-- next_status is QUEUED (retry after backoff_us) or FAILED; a task whose
-- cancellation was requested ends CANCELLED either way. A task that used
-- a slot of its key's rate waits (WAITING) for another instead of QUEUED. A retry is due
-- after its backoff at its priority; a finished task when it finished.
-- MySQL assigns left to right (MariaDB's SIMULTANEOUS_ASSIGNMENT mode all
-- at once): status comes last, and no expression reads a column that the
-- statement assigns before it, so both orders give the same row.
UPDATE leasegen_tasks SET
  due_at = IF(status = 'CANCEL_REQUESTED' OR sqlc.arg(next_status) = 'FAILED', NOW(3),
              NOW(3) + INTERVAL sqlc.arg(backoff_us) MICROSECOND),
  due_priority = IF(status = 'CANCEL_REQUESTED' OR sqlc.arg(next_status) = 'FAILED' OR flow_slot IS NOT NULL, 0, priority),
  available_at = NOW(3) + INTERVAL sqlc.arg(backoff_us) MICROSECOND,
  status = IF(status = 'CANCEL_REQUESTED', 'CANCELLED',
              IF(sqlc.arg(next_status) = 'QUEUED' AND flow_slot IS NOT NULL, 'WAITING', sqlc.arg(next_status))),
  flow_slot = NULL,
  last_error = sqlc.arg(last_error),
  updated_at = NOW(3)
WHERE id = sqlc.arg(id)
  AND lease_owner = sqlc.arg(lease_owner)
  AND attempt = sqlc.arg(attempt)
  AND status IN ('RUNNING', 'CANCEL_REQUESTED')
  AND due_at > NOW(3);

-- name: TaskRelease :execrows
-- Snooze and shutdown release: back to QUEUED after delay_us without using an
-- attempt (free_attempts rises with attempt, so attempt stays a fencing token).
-- With no delay the task keeps its place in the queue. A task whose
-- cancellation was requested ends CANCELLED instead; one that used a slot
-- of its key's rate waits for another. Ordered as in TaskFail.
UPDATE leasegen_tasks SET
  due_at = IF(status = 'CANCEL_REQUESTED', NOW(3),
              IF(sqlc.arg(delay_us) = 0, available_at, NOW(3) + INTERVAL sqlc.arg(delay_us) MICROSECOND)),
  due_priority = IF(status = 'CANCEL_REQUESTED' OR flow_slot IS NOT NULL, 0, priority),
  available_at = IF(sqlc.arg(delay_us) = 0, available_at, NOW(3) + INTERVAL sqlc.arg(delay_us) MICROSECOND),
  status = IF(status = 'CANCEL_REQUESTED', 'CANCELLED', IF(flow_slot IS NULL, 'QUEUED', 'WAITING')),
  flow_slot = NULL,
  free_attempts = free_attempts + 1,
  updated_at = NOW(3)
WHERE id = sqlc.arg(id)
  AND lease_owner = sqlc.arg(lease_owner)
  AND attempt = sqlc.arg(attempt)
  AND status IN ('RUNNING', 'CANCEL_REQUESTED')
  AND due_at > NOW(3);

-- name: TaskRecoverCandidates :many
-- A running task's due_priority is 0: the range of leasegen_tasks_due it
-- reads holds the expired leases only.
SELECT id, status, attempt, free_attempts, max_attempts, lease_owner, started_at,
       CAST(TIMESTAMPDIFF(MICROSECOND, due_at, NOW(3)) AS SIGNED) AS overdue_us
FROM leasegen_tasks
WHERE status IN ('RUNNING', 'CANCEL_REQUESTED')
  AND due_priority = 0
  AND due_at <= NOW(3)
LIMIT ?
FOR UPDATE SKIP LOCKED;

-- name: TaskRecoverMark :exec
-- Expired leases: CANCEL_REQUESTED ends CANCELLED; RUNNING goes back to QUEUED
-- (WAITING when it used a slot of its key's rate) while attempts remain,
-- else FAILED. A requeued task is due at its
-- available_at, so it returns to its old place in the queue, not the back;
-- a finished one when it finished. Columns that read the old status come
-- before status.
UPDATE leasegen_tasks SET
  due_at = IF(status = 'CANCEL_REQUESTED' OR attempt - free_attempts >= max_attempts, NOW(3), available_at),
  due_priority = IF(status = 'CANCEL_REQUESTED' OR attempt - free_attempts >= max_attempts OR flow_slot IS NOT NULL, 0, priority),
  last_error = IF(status = 'CANCEL_REQUESTED', last_error,
                  CONCAT('lease expired: owner ', lease_owner, ', attempt ', attempt)),
  status = CASE
    WHEN status = 'CANCEL_REQUESTED' THEN 'CANCELLED'
    WHEN attempt - free_attempts < max_attempts AND flow_slot IS NOT NULL THEN 'WAITING'
    WHEN attempt - free_attempts < max_attempts THEN 'QUEUED'
    ELSE 'FAILED'
  END,
  flow_slot = NULL,
  updated_at = NOW(3)
WHERE id IN (sqlc.slice(ids))
  AND status IN ('RUNNING', 'CANCEL_REQUESTED')
  AND due_at <= NOW(3);

-- name: TaskCountByTypeStatus :many
-- Queue depth: an index-only scan of leasegen_tasks_due.
SELECT task_type, status, COUNT(*) AS tasks FROM leasegen_tasks
GROUP BY status, task_type;

-- name: TaskOldestQueued :many
-- A queued task's due_at is its available_at: leasegen_tasks_due alone.
SELECT task_type, CAST(MIN(due_at) AS DATETIME(3)) AS oldest FROM leasegen_tasks
WHERE status = 'QUEUED'
GROUP BY task_type;

-- name: TaskSampleQueued :many
-- Bounded counts: the first queued rows in leasegen_tasks_due (those next
-- to run), by type, with the earliest due_at among them.
SELECT task_type, COUNT(*) AS tasks, CAST(MIN(due_at) AS DATETIME(3)) AS oldest
FROM (SELECT task_type, due_at FROM leasegen_tasks WHERE status = 'QUEUED' LIMIT ?) s
GROUP BY task_type;

-- name: TaskSampleActive :many
-- The same for RUNNING or CANCEL_REQUESTED: due_at is when the lease ends.
SELECT task_type, COUNT(*) AS tasks, CAST(MIN(due_at) AS DATETIME(3)) AS oldest
FROM (SELECT task_type, due_at FROM leasegen_tasks WHERE status = sqlc.arg(status) LIMIT ?) s
GROUP BY task_type;

-- name: TaskSampleFinished :many
-- The same for a final status: due_at is when the task finished.
SELECT task_type, COUNT(*) AS tasks, CAST(MIN(due_at) AS DATETIME(3)) AS oldest
FROM (SELECT task_type, due_at FROM leasegen_tasks WHERE status = sqlc.arg(status) LIMIT ?) s
GROUP BY task_type;

-- name: TaskRunningByOwner :many
SELECT lease_owner AS owner, COUNT(*) AS tasks FROM leasegen_tasks
WHERE status IN ('RUNNING', 'CANCEL_REQUESTED')
GROUP BY lease_owner;

-- name: TaskList :many
-- Empty filters match everything; min_age_us keeps tasks created at least
-- that long ago; before_id pages by keyset (the tasks below an id);
-- error_text keeps the tasks whose last error holds it.
SELECT * FROM leasegen_tasks
WHERE (sqlc.arg(status) = '' OR status = sqlc.arg(status))
  AND (sqlc.arg(task_type) = '' OR task_type = sqlc.arg(task_type))
  AND (sqlc.arg(owner_id) = '' OR owner_id = sqlc.arg(owner_id))
  AND created_at <= NOW(3) - INTERVAL sqlc.arg(min_age_us) MICROSECOND
  AND (sqlc.arg(before_id) = 0 OR id < sqlc.arg(before_id))
  AND (sqlc.arg(idempotency_key) = '' OR idempotency_key = sqlc.arg(idempotency_key))
  AND (sqlc.arg(error_text) = '' OR LOCATE(sqlc.arg(error_text), last_error) > 0)
ORDER BY id DESC
LIMIT ?;

-- name: TaskListFinished :many
-- The tasks of one final status, the latest finished first, read backward
-- through leasegen_tasks_due (a finished task is due when it finished, at
-- due_priority 0): a page reads about its own rows however old they are.
-- Keyset: below (before_at, before_id).
SELECT * FROM leasegen_tasks
WHERE status = sqlc.arg(status) AND due_priority = 0
  AND (sqlc.arg(task_type) = '' OR task_type = sqlc.arg(task_type))
  AND (due_at < sqlc.arg(before_at) OR (due_at = sqlc.arg(before_at) AND id < sqlc.arg(before_id)))
ORDER BY due_at DESC, id DESC
LIMIT ?;

-- name: TaskRetry :execrows
-- A FAILED or CANCELLED task runs again with all its attempts: free_attempts
-- catches up with attempt, which keeps rising as the fencing token. A
-- keyed task waits for its key's slot again.
UPDATE leasegen_tasks SET
  status = IF(flow_key IS NULL, 'QUEUED', 'WAITING'),
  available_at = NOW(3),
  due_at = NOW(3),
  due_priority = IF(flow_key IS NULL, priority, 0),
  free_attempts = attempt,
  updated_at = NOW(3)
WHERE id = ? AND status IN ('FAILED', 'CANCELLED');

-- name: TaskCountPurgeable :one
-- What TaskPurge would delete, counted up to a cap, through
-- leasegen_tasks_due.
SELECT COUNT(*) FROM (
  SELECT 1 FROM leasegen_tasks
  WHERE status IN ('SUCCESS', 'FAILED', 'CANCELLED')
    AND due_priority = 0
    AND due_at < NOW(3) - INTERVAL sqlc.arg(age_us) MICROSECOND
  LIMIT ?
) AS purgeable;

-- name: TaskDiscard :execrows
-- Deletes a task that no worker holds: queued, or finished.
DELETE FROM leasegen_tasks WHERE id = ? AND status NOT IN ('RUNNING', 'CANCEL_REQUESTED');

-- name: TaskPurge :execrows
-- One batch of finished tasks older than the cutoff, found through
-- leasegen_tasks_due: a finished task is due when it finished, at
-- due_priority 0. A workflow step's parent stays while a step after it
-- waits: the step reads it when it is decided, and when it runs.
DELETE FROM leasegen_tasks
WHERE status IN ('SUCCESS', 'FAILED', 'CANCELLED')
  AND due_priority = 0
  AND due_at < NOW(3) - INTERVAL sqlc.arg(age_us) MICROSECOND
  AND NOT EXISTS (SELECT 1 FROM leasegen_task_deps d JOIN leasegen_workflow_steps s ON s.task_id = d.child_id
                  WHERE d.parent_id = leasegen_tasks.id AND s.waiting)
LIMIT ?;

-- name: TaskProbe :one
-- The idle poll: one look into leasegen_tasks_due, no lock, no
-- transaction. Paused types do not count. It also asks whether one of the
-- worker's schedules is due.
SELECT EXISTS (
  SELECT 1 FROM leasegen_tasks
  WHERE status = 'QUEUED'
    AND leasegen_tasks.task_type IN (sqlc.slice(task_types))
    AND due_at <= NOW(3)
    AND leasegen_tasks.task_type NOT IN (SELECT p.task_type FROM leasegen_paused_types p)
) AS claimable, EXISTS (
  SELECT 1 FROM leasegen_schedules s
  WHERE s.name IN (sqlc.slice(schedule_names)) AND s.next_run <= NOW(6) AND s.paused = FALSE
) AS schedules_due;

-- name: TaskLeasesExpired :one
-- A recovery pass looks first, without a transaction or locks: most find
-- nothing.
SELECT EXISTS (
  SELECT 1 FROM leasegen_tasks
  WHERE status IN ('RUNNING', 'CANCEL_REQUESTED')
    AND due_priority = 0
    AND due_at <= NOW(3)
) AS expired;
