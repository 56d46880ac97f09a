-- The database's clock is (SELECT CAST(unixepoch('subsec') * 1000 AS
-- INTEGER)): as a scalar subquery SQLite reads it once per statement, so
-- every row of a statement gets the same instant, and a batch of 1,000 rows
-- does not read the clock thousands of times.

-- name: TaskInsert :one
-- An existing (task_type, idempotency_key) returns the existing row's id.
-- A queued task is due when it becomes claimable.
INSERT INTO leasegen_tasks (
  task_type, status, payload, priority, available_at, due_at, max_attempts,
  owner_id, idempotency_key, metadata, created_at, updated_at
) VALUES (
  sqlc.arg(task_type), 'QUEUED', sqlc.arg(payload), sqlc.arg(priority),
  COALESCE(sqlc.narg(run_at_ms), (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)) + sqlc.arg(delay_ms)),
  COALESCE(sqlc.narg(run_at_ms), (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)) + sqlc.arg(delay_ms)),
  sqlc.arg(max_attempts), sqlc.arg(owner_id), sqlc.narg(idempotency_key), sqlc.narg(metadata),
  (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)), (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER))
)
ON CONFLICT (task_type, idempotency_key) WHERE idempotency_key IS NOT NULL DO UPDATE SET id = id
RETURNING id;

-- name: TaskGet :one
SELECT * FROM leasegen_tasks WHERE id = ?;

-- name: TaskListByOwner :many
-- Bare ? only: sqlc binds named arguments next to a slice to the wrong slots.
SELECT * FROM leasegen_tasks
WHERE owner_id = ? AND owner_id <> '' AND status IN (sqlc.slice(statuses))
ORDER BY created_at DESC, id DESC
LIMIT ?;

-- name: TaskCancelRequest :execrows
-- See the MySQL query. SQLite's SET reads the old row.
UPDATE leasegen_tasks SET
  due_at = IIF(status = 'RUNNING', due_at, (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER))),
  status = IIF(status = 'RUNNING', 'CANCEL_REQUESTED', 'CANCELLED'),
  updated_at = (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER))
WHERE id = ? AND status IN ('QUEUED', 'WAITING', 'RUNNING');

-- name: TaskCountRunning :many
-- Reads leasegen_tasks_leases alone.
SELECT task_type, COUNT(*) AS running FROM leasegen_tasks
WHERE status IN ('RUNNING', 'CANCEL_REQUESTED')
GROUP BY task_type;

-- name: TaskClaimScan :many
-- The next claimable tasks in claim order (leasegen_tasks_queue), with what
-- an execution needs. A claim without concurrency limits reads them outside
-- the write lock (WAL readers never wait) and then, under the lock, claims
-- those still queued at the attempt seen here (claimTakeSQL); a claim under
-- limits reads them in the write transaction that counted the running
-- tasks, and marks them (TaskClaimMark). Paused types are skipped.
SELECT id, task_type, payload, priority, available_at, attempt, free_attempts,
       max_attempts, owner_id, idempotency_key, metadata, flow_key, flow_slot, (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)) AS scanned_at
FROM leasegen_tasks
WHERE status = 'QUEUED'
  AND leasegen_tasks.task_type IN (sqlc.slice(task_types))
  AND due_at <= (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER))
  AND leasegen_tasks.task_type NOT IN (SELECT p.task_type FROM leasegen_paused_types p)
ORDER BY priority DESC, due_at, id
LIMIT ?;

-- name: TaskClaimMark :exec
UPDATE leasegen_tasks SET
  status = 'RUNNING',
  attempt = attempt + 1,
  lease_owner = sqlc.arg(lease_owner),
  due_at = (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)) + CAST(sqlc.arg(lease_ms) AS INTEGER),
  started_at = (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)),
  updated_at = (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER))
WHERE id IN (sqlc.slice(ids));

-- name: TaskRenewMany :many
-- One statement: the rows it returns are the leases still held. The unary
-- + keeps the planner on the primary key (see claimTakeSQL).
UPDATE leasegen_tasks SET
  due_at = (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)) + CAST(sqlc.arg(lease_ms) AS INTEGER),
  updated_at = (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER))
WHERE +lease_owner = sqlc.arg(lease_owner)
  AND +status IN ('RUNNING', 'CANCEL_REQUESTED')
  AND +due_at > (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER))
  AND id IN (sqlc.slice(ids))
RETURNING id, attempt, status;

-- name: TaskRowStates :many
-- Read back after a grouped claim or completion that changed fewer rows
-- than it named, to tell which took effect.
SELECT id, attempt, status, CAST(COALESCE(lease_owner, '') AS TEXT) AS lease_owner
FROM leasegen_tasks
WHERE id IN (sqlc.slice(ids));

-- name: TaskComplete :execrows
-- A finished task is due when it finished, as on MySQL.
UPDATE leasegen_tasks SET
  status = 'SUCCESS',
  result = sqlc.narg(result),
  due_at = (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)),
  updated_at = (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER))
WHERE id = sqlc.arg(id)
  AND lease_owner = sqlc.arg(lease_owner)
  AND attempt = sqlc.arg(attempt)
  AND status IN ('RUNNING', 'CANCEL_REQUESTED')
  AND due_at > (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER));

-- name: TaskFail :execrows
-- next_status is QUEUED (retry after backoff_ms) or FAILED; a task whose
-- cancellation was requested ends CANCELLED either way, and one that used
-- a slot of its key's rate waits (WAITING) for another. SQLite's SET reads
-- the old row.
UPDATE leasegen_tasks SET
  due_at = IIF(status = 'CANCEL_REQUESTED' OR sqlc.arg(next_status) = 'FAILED', (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)),
               (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)) + sqlc.arg(backoff_ms)),
  status = IIF(status = 'CANCEL_REQUESTED', 'CANCELLED',
               IIF(sqlc.arg(next_status) = 'QUEUED' AND flow_slot IS NOT NULL, 'WAITING', sqlc.arg(next_status))),
  flow_slot = NULL,
  available_at = (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)) + sqlc.arg(backoff_ms),
  last_error = sqlc.arg(last_error),
  updated_at = (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER))
WHERE id = sqlc.arg(id)
  AND lease_owner = sqlc.arg(lease_owner)
  AND attempt = sqlc.arg(attempt)
  AND status IN ('RUNNING', 'CANCEL_REQUESTED')
  AND due_at > (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER));

-- name: TaskRelease :execrows
-- See the MySQL query: with no delay the task keeps its place in the queue.
UPDATE leasegen_tasks SET
  due_at = IIF(status = 'CANCEL_REQUESTED', (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)),
               IIF(sqlc.arg(delay_ms) = 0, available_at, (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)) + sqlc.arg(delay_ms))),
  status = IIF(status = 'CANCEL_REQUESTED', 'CANCELLED', IIF(flow_slot IS NULL, 'QUEUED', 'WAITING')),
  flow_slot = NULL,
  free_attempts = free_attempts + 1,
  available_at = IIF(sqlc.arg(delay_ms) = 0, available_at, (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)) + sqlc.arg(delay_ms)),
  updated_at = (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER))
WHERE id = sqlc.arg(id)
  AND lease_owner = sqlc.arg(lease_owner)
  AND attempt = sqlc.arg(attempt)
  AND status IN ('RUNNING', 'CANCEL_REQUESTED')
  AND due_at > (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER));

-- name: TaskRecoverCandidates :many
SELECT id, status, attempt, free_attempts, max_attempts, lease_owner, started_at,
       (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)) - due_at AS overdue_ms
FROM leasegen_tasks
WHERE status IN ('RUNNING', 'CANCEL_REQUESTED')
  AND due_at <= (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER))
LIMIT ?;

-- name: TaskRecoverMark :exec
-- See the MySQL query: a requeued task is due at its available_at.
UPDATE leasegen_tasks SET
  due_at = IIF(status = 'CANCEL_REQUESTED' OR attempt - free_attempts >= max_attempts, (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)), available_at),
  last_error = IIF(status = 'CANCEL_REQUESTED', last_error,
                   'lease expired: owner ' || COALESCE(lease_owner, '?') || ', attempt ' || attempt),
  status = CASE
    WHEN status = 'CANCEL_REQUESTED' THEN 'CANCELLED'
    WHEN attempt - free_attempts < max_attempts AND flow_slot IS NOT NULL THEN 'WAITING'
    WHEN attempt - free_attempts < max_attempts THEN 'QUEUED'
    ELSE 'FAILED'
  END,
  updated_at = (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER))
WHERE id IN (sqlc.slice(ids))
  AND status IN ('RUNNING', 'CANCEL_REQUESTED')
  AND due_at <= (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER));

-- name: TaskCountByTypeStatus :many
SELECT task_type, status, COUNT(*) AS tasks FROM leasegen_tasks
GROUP BY status, task_type;

-- name: TaskOldestQueued :many
SELECT task_type, CAST(MIN(due_at) AS INTEGER) AS oldest FROM leasegen_tasks
WHERE status = 'QUEUED'
GROUP BY task_type;

-- name: TaskSampleQueued :many
-- Bounded counts: the first queued tasks, in leasegen_tasks_queue's order
-- (those next to run), by type, with the earliest due_at among them.
SELECT task_type, COUNT(*) AS tasks, CAST(MIN(due_at) AS INTEGER) AS oldest
FROM (SELECT task_type, due_at FROM leasegen_tasks WHERE status = 'QUEUED' LIMIT sqlc.arg('limit'))
GROUP BY task_type;

-- name: TaskSampleActive :many
-- The same for RUNNING or CANCEL_REQUESTED, through leasegen_tasks_leases:
-- the IN term lets the partial index serve a status given as a parameter.
SELECT task_type, COUNT(*) AS tasks, CAST(MIN(due_at) AS INTEGER) AS oldest
FROM (SELECT task_type, due_at FROM leasegen_tasks
      WHERE status IN ('RUNNING', 'CANCEL_REQUESTED') AND status = sqlc.arg(status) LIMIT sqlc.arg('limit'))
GROUP BY task_type;

-- name: TaskSampleFinished :many
-- The same for a final status, through leasegen_tasks_finished.
SELECT task_type, COUNT(*) AS tasks, CAST(MIN(due_at) AS INTEGER) AS oldest
FROM (SELECT task_type, due_at FROM leasegen_tasks
      WHERE status IN ('SUCCESS', 'FAILED', 'CANCELLED') AND status = sqlc.arg(status) LIMIT sqlc.arg('limit'))
GROUP BY task_type;

-- name: TaskRunningByOwner :many
SELECT CAST(COALESCE(lease_owner, '') AS TEXT) AS owner, COUNT(*) AS tasks FROM leasegen_tasks
WHERE status IN ('RUNNING', 'CANCEL_REQUESTED')
GROUP BY lease_owner;

-- name: TaskList :many
SELECT * FROM leasegen_tasks
WHERE (sqlc.arg(status) = '' OR status = sqlc.arg(status))
  AND (sqlc.arg(task_type) = '' OR task_type = sqlc.arg(task_type))
  AND (sqlc.arg(owner_id) = '' OR owner_id = sqlc.arg(owner_id))
  AND created_at <= (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)) - sqlc.arg(min_age_ms)
  AND (sqlc.arg(before_id) = 0 OR id < sqlc.arg(before_id))
  AND (sqlc.arg(idempotency_key) = '' OR idempotency_key = sqlc.arg(idempotency_key))
  AND (sqlc.arg(error_text) = '' OR instr(last_error, sqlc.arg(error_text)) > 0)
ORDER BY id DESC
LIMIT sqlc.arg('limit');

-- name: TaskListFinished :many
-- The tasks of one final status, the latest finished first, read backward
-- through leasegen_tasks_finished (see the MySQL query). Keyset: below
-- (before_at, before_id).
SELECT * FROM leasegen_tasks
WHERE status IN ('SUCCESS', 'FAILED', 'CANCELLED') AND status = sqlc.arg(status)
  AND (sqlc.arg(task_type) = '' OR task_type = sqlc.arg(task_type))
  AND (due_at < sqlc.arg(before_at) OR (due_at = sqlc.arg(before_at) AND id < sqlc.arg(before_id)))
ORDER BY due_at DESC, id DESC
LIMIT sqlc.arg('limit');

-- name: TaskRetry :execrows
UPDATE leasegen_tasks SET
  status = IIF(flow_key IS NULL, 'QUEUED', 'WAITING'),
  available_at = (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)),
  due_at = (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)),
  free_attempts = attempt,
  updated_at = (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER))
WHERE id = ? AND status IN ('FAILED', 'CANCELLED');

-- name: TaskCountPurgeable :one
-- What TaskPurge would delete, counted up to a cap.
SELECT COUNT(*) FROM (
  SELECT 1 FROM leasegen_tasks
  WHERE status IN ('SUCCESS', 'FAILED', 'CANCELLED')
    AND due_at < (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)) - sqlc.arg(age_ms)
  LIMIT sqlc.arg('limit')
) AS purgeable;

-- name: TaskDiscard :execrows
-- Deletes a task that no worker holds: queued, or finished.
DELETE FROM leasegen_tasks WHERE id = ? AND status NOT IN ('RUNNING', 'CANCEL_REQUESTED');

-- name: TaskPurge :execrows
-- Walks leasegen_tasks_finished; not the parents of waiting workflow
-- steps (see the MySQL query).
DELETE FROM leasegen_tasks
WHERE id IN (
  SELECT t.id FROM leasegen_tasks t
  WHERE t.status IN ('SUCCESS', 'FAILED', 'CANCELLED')
    AND t.due_at < (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)) - sqlc.arg(age_ms)
    AND NOT EXISTS (SELECT 1 FROM leasegen_task_deps d JOIN leasegen_workflow_steps s ON s.task_id = d.child_id
                    WHERE d.parent_id = t.id AND s.waiting)
  LIMIT sqlc.arg('limit')
);

-- name: TaskProbe :one
-- The idle poll: one look into leasegen_tasks_queue, outside the write lock.
-- Paused types do not count.
-- It also asks whether one of the worker's schedules is due.
SELECT EXISTS (
  SELECT 1 FROM leasegen_tasks
  WHERE status = 'QUEUED'
    AND leasegen_tasks.task_type IN (sqlc.slice(task_types))
    AND due_at <= (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER))
    AND leasegen_tasks.task_type NOT IN (SELECT p.task_type FROM leasegen_paused_types p)
) AS claimable, EXISTS (
  SELECT 1 FROM leasegen_schedules s
  WHERE s.name IN (sqlc.slice(schedule_names)) AND s.next_run <= (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)) AND s.paused = 0
) AS schedules_due;

-- name: TaskLeasesExpired :one
-- A recovery pass looks first, outside the write lock: most find nothing.
SELECT EXISTS (
  SELECT 1 FROM leasegen_tasks
  WHERE status IN ('RUNNING', 'CANCEL_REQUESTED')
    AND due_at <= (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER))
) AS expired;
