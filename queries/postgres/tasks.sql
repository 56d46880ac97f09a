-- Every instant is the server's now(): the transaction's start, the same
-- for every row of a statement. A claim, renewal or completion runs in a
-- transaction of its own, so now() is the statement's time.

-- name: TaskInsert :one
-- An existing (task_type, idempotency_key) returns the existing row's id:
-- the no-op update locks it, so a concurrent insert of the key waits and
-- then returns the same id.
INSERT INTO leasegen_tasks (
  task_type, status, payload, priority, available_at, max_attempts,
  owner_id, idempotency_key, metadata, created_at, updated_at
) VALUES (
  @task_type, 'QUEUED', @payload, @priority,
  COALESCE(sqlc.narg(run_at)::timestamptz, now() + sqlc.arg(delay_us)::bigint * interval '1 microsecond'),
  @max_attempts, @owner_id, sqlc.narg(idempotency_key), sqlc.narg(metadata), now(), now()
)
ON CONFLICT (task_type, idempotency_key) WHERE idempotency_key IS NOT NULL DO UPDATE SET task_type = EXCLUDED.task_type
RETURNING id;

-- name: TaskInsertMany :many
-- A batch in one statement, one array per column (the arrays unnest
-- side by side); the rows are inserted, and come back, in the arrays'
-- order, which Insert checks on the keyed ones. A batch holds each key
-- once (Insert removes repeats). Arrays hold no NULLs: a run-at of -1, an
-- empty key and empty metadata mean none.
INSERT INTO leasegen_tasks (
  task_type, status, payload, priority, available_at, max_attempts,
  owner_id, idempotency_key, metadata, created_at, updated_at
)
SELECT r.task_type, 'QUEUED', r.payload, r.priority,
       COALESCE(to_timestamp(NULLIF(r.run_at_us, -1) / 1000000.0), now() + r.delay_us * interval '1 microsecond'),
       r.max_attempts, r.owner_id, NULLIF(r.idempotency_key, ''), NULLIF(r.metadata, ''), now(), now()
FROM (
  SELECT unnest(@task_types::text[]) AS task_type, unnest(@payloads::bytea[]) AS payload,
         unnest(@priorities::integer[]) AS priority, unnest(@run_ats_us::bigint[]) AS run_at_us,
         unnest(@delays_us::bigint[]) AS delay_us, unnest(@max_attempts::integer[]) AS max_attempts,
         unnest(@owner_ids::text[]) AS owner_id, unnest(@idempotency_keys::text[]) AS idempotency_key,
         unnest(@metadatas::text[]) AS metadata
) AS r
ON CONFLICT (task_type, idempotency_key) WHERE idempotency_key IS NOT NULL DO UPDATE SET task_type = EXCLUDED.task_type
RETURNING id, task_type, idempotency_key;

-- name: TaskInsertManyUnkeyed :many
-- TaskInsertMany for a batch without idempotency keys: without ON
-- CONFLICT each row is a plain insert, not a speculative one (which costs
-- every row a second WAL record to confirm it).
INSERT INTO leasegen_tasks (
  task_type, status, payload, priority, available_at, max_attempts,
  owner_id, idempotency_key, metadata, created_at, updated_at
)
SELECT r.task_type, 'QUEUED', r.payload, r.priority,
       COALESCE(to_timestamp(NULLIF(r.run_at_us, -1) / 1000000.0), now() + r.delay_us * interval '1 microsecond'),
       r.max_attempts, r.owner_id, NULLIF(r.idempotency_key, ''), NULLIF(r.metadata, ''), now(), now()
FROM (
  SELECT unnest(@task_types::text[]) AS task_type, unnest(@payloads::bytea[]) AS payload,
         unnest(@priorities::integer[]) AS priority, unnest(@run_ats_us::bigint[]) AS run_at_us,
         unnest(@delays_us::bigint[]) AS delay_us, unnest(@max_attempts::integer[]) AS max_attempts,
         unnest(@owner_ids::text[]) AS owner_id, unnest(@idempotency_keys::text[]) AS idempotency_key,
         unnest(@metadatas::text[]) AS metadata
) AS r
RETURNING id, task_type, idempotency_key;

-- name: TaskGet :one
SELECT * FROM leasegen_tasks WHERE id = $1;

-- name: TaskListByOwner :many
-- owner_id <> '' matches leasegen_tasks_by_owner's predicate.
SELECT * FROM leasegen_tasks
WHERE owner_id = @owner_id AND owner_id <> '' AND status = ANY(@statuses::text[])
ORDER BY created_at DESC, id DESC
LIMIT sqlc.arg('limit');

-- name: TaskCancelRequest :execrows
-- QUEUED or WAITING becomes CANCELLED at once; RUNNING becomes
-- CANCEL_REQUESTED, and its worker learns it at the next heartbeat. SET
-- reads the old row.
UPDATE leasegen_tasks SET
  finished_at = CASE WHEN status = 'RUNNING' THEN finished_at ELSE now() END,
  status = CASE WHEN status = 'RUNNING' THEN 'CANCEL_REQUESTED' ELSE 'CANCELLED' END,
  updated_at = now()
WHERE id = $1 AND status IN ('QUEUED', 'WAITING', 'RUNNING');

-- name: TaskCountRunning :many
-- leasegen_tasks_running alone.
SELECT task_type, COUNT(*) AS running FROM leasegen_tasks
WHERE status IN ('RUNNING', 'CANCEL_REQUESTED')
GROUP BY task_type;

-- name: TaskClaim :many
-- A claim in one statement: leasegen_claim (migration 0001) locks the next
-- claimable tasks in claim order and starts their leases. Only what an
-- execution needs crosses the wire.
SELECT c.id, c.task_type, c.payload, c.priority, c.available_at, c.attempt, c.free_attempts,
  c.max_attempts, c.owner_id, c.idempotency_key, c.metadata, c.flow_key, c.flow_slot, c.started_at
FROM leasegen_claim(@lease_owner::text, @task_types::text[], @lim::integer,
  @default_lease_us::bigint, @lease_types::text[], @lease_us::bigint[]) c;

-- name: TaskClaimCandidates :many
-- A claim under limits, after it locked the limit rows and counted the
-- running tasks: the next claimable tasks of the types, locked, and the
-- instant the claim starts their leases (TaskClaimMark).
SELECT t.id, t.task_type, t.payload, t.priority, t.available_at, t.attempt, t.free_attempts,
       t.max_attempts, t.owner_id, t.idempotency_key, t.metadata, t.flow_key, t.flow_slot, now()::timestamptz AS claimed_at
FROM leasegen_tasks t
WHERE t.status = 'QUEUED'
  AND t.task_type = ANY(@task_types::text[])
  AND t.available_at <= now()
  AND t.task_type NOT IN (SELECT p.task_type FROM leasegen_paused_types p)
ORDER BY t.priority DESC, t.available_at, t.id
LIMIT @lim
FOR UPDATE OF t SKIP LOCKED;

-- name: TaskClaimMark :exec
UPDATE leasegen_tasks SET
  status = 'RUNNING',
  attempt = attempt + 1,
  lease_owner = @lease_owner,
  lease_until = now() + sqlc.arg(lease_us)::bigint * interval '1 microsecond',
  started_at = now(),
  updated_at = now()
WHERE id = ANY(@ids::bigint[]);

-- name: TaskRenewMany :many
-- One statement: the rows it returns are the leases it extended. It
-- writes no indexed column, so each is a heap-only update.
UPDATE leasegen_tasks SET
  lease_until = now() + sqlc.arg(lease_us)::bigint * interval '1 microsecond',
  updated_at = now()
WHERE lease_owner = @lease_owner
  AND status IN ('RUNNING', 'CANCEL_REQUESTED')
  AND lease_until > now()
  AND id = ANY(@ids::bigint[])
RETURNING id, attempt, status;

-- name: TaskComplete :execrows
UPDATE leasegen_tasks SET
  status = 'SUCCESS',
  result = sqlc.narg(result),
  finished_at = now(),
  updated_at = now()
WHERE id = @id
  AND lease_owner = @lease_owner
  AND attempt = @attempt
  AND status IN ('RUNNING', 'CANCEL_REQUESTED')
  AND lease_until > now();

-- name: TaskCompleteMany :many
-- Several of one owner's executions, each fenced on its own attempt and
-- given its own result, in one statement; the rows it returns took effect.
UPDATE leasegen_tasks t SET
  status = 'SUCCESS',
  result = r.result,
  finished_at = now(),
  updated_at = now()
FROM (SELECT unnest(@ids::bigint[]) AS id, unnest(@attempts::integer[]) AS attempt, unnest(@results::text[]) AS result) AS r
WHERE t.id = r.id
  AND t.attempt = r.attempt
  AND t.lease_owner = @lease_owner
  AND t.status IN ('RUNNING', 'CANCEL_REQUESTED')
  AND t.lease_until > now()
RETURNING t.id;

-- name: TaskCompleteManyAttempt :many
-- TaskCompleteMany for the usual batch, every execution at one attempt and
-- none with a result: the ids as one array the primary key looks up,
-- without the join (a tenth to a fifth of the statement).
UPDATE leasegen_tasks SET
  status = 'SUCCESS',
  result = NULL,
  finished_at = now(),
  updated_at = now()
WHERE id = ANY(@ids::bigint[])
  AND attempt = @attempt
  AND lease_owner = @lease_owner
  AND status IN ('RUNNING', 'CANCEL_REQUESTED')
  AND lease_until > now()
RETURNING id;

-- name: TaskFail :execrows
-- next_status is QUEUED (retry after backoff_us) or FAILED; a task whose
-- cancellation was requested ends CANCELLED either way. A task that used
-- a slot of its key's rate waits (WAITING) for another instead of QUEUED.
UPDATE leasegen_tasks SET
  finished_at = CASE WHEN status = 'CANCEL_REQUESTED' OR @next_status::text = 'FAILED' THEN now() ELSE NULL END,
  available_at = now() + sqlc.arg(backoff_us)::bigint * interval '1 microsecond',
  status = CASE WHEN status = 'CANCEL_REQUESTED' THEN 'CANCELLED'
                WHEN @next_status::text = 'QUEUED' AND flow_slot IS NOT NULL THEN 'WAITING'
                ELSE @next_status::text END,
  flow_slot = NULL,
  last_error = @last_error,
  updated_at = now()
WHERE id = @id
  AND lease_owner = @lease_owner
  AND attempt = @attempt
  AND status IN ('RUNNING', 'CANCEL_REQUESTED')
  AND lease_until > now();

-- name: TaskRelease :execrows
-- Snooze and shutdown release: QUEUED after delay_us without using an
-- attempt; with no delay the task keeps its place in the queue. A task
-- whose cancellation was requested ends CANCELLED instead; one that used
-- a slot of its key's rate waits for another.
UPDATE leasegen_tasks SET
  finished_at = CASE WHEN status = 'CANCEL_REQUESTED' THEN now() ELSE NULL END,
  available_at = CASE WHEN @delay_us::bigint = 0 THEN available_at
                      ELSE now() + sqlc.arg(delay_us)::bigint * interval '1 microsecond' END,
  status = CASE WHEN status = 'CANCEL_REQUESTED' THEN 'CANCELLED' WHEN flow_slot IS NOT NULL THEN 'WAITING' ELSE 'QUEUED' END,
  flow_slot = NULL,
  free_attempts = free_attempts + 1,
  updated_at = now()
WHERE id = @id
  AND lease_owner = @lease_owner
  AND attempt = @attempt
  AND status IN ('RUNNING', 'CANCEL_REQUESTED')
  AND lease_until > now();

-- name: TaskReleaseUnstarted :execrows
-- Claimed tasks whose handlers never started go back at their place,
-- fenced on owner and each one's attempt but not on an unexpired lease: no
-- handler ran, and while the row stays RUNNING at that attempt under owner
-- nobody else can hold it.
UPDATE leasegen_tasks t SET
  finished_at = CASE WHEN t.status = 'CANCEL_REQUESTED' THEN now() ELSE NULL END,
  status = CASE WHEN t.status = 'CANCEL_REQUESTED' THEN 'CANCELLED' WHEN t.flow_slot IS NOT NULL THEN 'WAITING' ELSE 'QUEUED' END,
  flow_slot = NULL,
  free_attempts = t.free_attempts + 1,
  updated_at = now()
FROM (SELECT unnest(@ids::bigint[]) AS id, unnest(@attempts::integer[]) AS attempt) AS r
WHERE t.id = r.id
  AND t.attempt = r.attempt
  AND t.lease_owner = @lease_owner
  AND t.status IN ('RUNNING', 'CANCEL_REQUESTED');

-- name: TaskRowStates :many
SELECT id, attempt, status, lease_owner FROM leasegen_tasks WHERE id = ANY(@ids::bigint[]);

-- name: TaskRecover :many
-- Expired leases, up to lim, skipping rows another recoverer holds:
-- CANCEL_REQUESTED ends CANCELLED; RUNNING goes back to QUEUED at its old
-- place (WAITING when it used a slot of its key's rate) while attempts
-- remain, else FAILED. The running rows are few, so
-- checking lease_until on each is cheap.
WITH expired AS (
  SELECT t.id, t.lease_until AS expired_at FROM leasegen_tasks t
  WHERE t.status IN ('RUNNING', 'CANCEL_REQUESTED')
    AND t.lease_until <= now()
  ORDER BY t.lease_until
  LIMIT @lim
  FOR UPDATE OF t SKIP LOCKED
)
UPDATE leasegen_tasks u SET
  finished_at = CASE WHEN u.status = 'CANCEL_REQUESTED' OR u.attempt - u.free_attempts >= u.max_attempts THEN now() ELSE NULL END,
  last_error = CASE WHEN u.status = 'CANCEL_REQUESTED' THEN u.last_error
                    ELSE 'lease expired: owner ' || u.lease_owner || ', attempt ' || u.attempt END,
  status = CASE
    WHEN u.status = 'CANCEL_REQUESTED' THEN 'CANCELLED'
    WHEN u.attempt - u.free_attempts < u.max_attempts AND u.flow_slot IS NOT NULL THEN 'WAITING'
    WHEN u.attempt - u.free_attempts < u.max_attempts THEN 'QUEUED'
    ELSE 'FAILED'
  END,
  flow_slot = NULL,
  updated_at = now()
FROM expired
WHERE u.id = expired.id
RETURNING u.id, u.status, u.attempt, u.lease_owner, u.started_at,
  CAST(EXTRACT(EPOCH FROM now() - expired.expired_at) * 1000000 AS BIGINT) AS overdue_us;

-- name: TaskCountByTypeStatus :many
SELECT task_type, status, COUNT(*) AS tasks FROM leasegen_tasks
GROUP BY status, task_type;

-- name: TaskOldestQueued :many
SELECT task_type, MIN(available_at)::timestamptz AS oldest FROM leasegen_tasks
WHERE status = 'QUEUED'
GROUP BY task_type;

-- name: TaskSampleQueued :many
-- Bounded counts: the first queued tasks, in leasegen_tasks_queue's order
-- (those next to run), by type, with the earliest available_at among them.
SELECT task_type, COUNT(*) AS tasks, MIN(available_at)::timestamptz AS oldest
FROM (SELECT t.task_type, t.available_at FROM leasegen_tasks t WHERE t.status = 'QUEUED' LIMIT sqlc.arg('limit')) s
GROUP BY task_type;

-- name: TaskSampleActive :many
-- The same for RUNNING or CANCEL_REQUESTED, through leasegen_tasks_running:
-- the IN term proves the partial index's predicate in a generic plan too.
SELECT task_type, COUNT(*) AS tasks, MIN(available_at)::timestamptz AS oldest
FROM (SELECT t.task_type, t.available_at FROM leasegen_tasks t
      WHERE t.status IN ('RUNNING', 'CANCEL_REQUESTED') AND t.status = sqlc.arg(status) LIMIT sqlc.arg('limit')) s
GROUP BY task_type;

-- name: TaskSampleFinished :many
-- The same for a final status, from leasegen_tasks_finished alone (oldest
-- is the earliest finish).
SELECT task_type, COUNT(*) AS tasks, MIN(finished_at)::timestamptz AS oldest
FROM (SELECT t.task_type, t.finished_at FROM leasegen_tasks t
      WHERE t.status IN ('SUCCESS', 'FAILED', 'CANCELLED') AND t.status = sqlc.arg(status) LIMIT sqlc.arg('limit')) s
GROUP BY task_type;

-- name: TaskRunningByOwner :many
SELECT lease_owner AS owner, COUNT(*) AS tasks FROM leasegen_tasks
WHERE status IN ('RUNNING', 'CANCEL_REQUESTED')
GROUP BY lease_owner;

-- name: TaskList :many
-- Empty filters match everything; min_age_us keeps tasks created at least
-- that long ago; before_id pages by keyset (the tasks below an id).
SELECT * FROM leasegen_tasks
WHERE (@status::text = '' OR status = @status::text)
  AND (@task_type::text = '' OR task_type = @task_type::text)
  AND (@owner_id::text = '' OR owner_id = @owner_id::text)
  AND created_at <= now() - sqlc.arg(min_age_us)::bigint * interval '1 microsecond'
  AND (@before_id::bigint = 0 OR id < @before_id::bigint)
  AND (@idempotency_key::text = '' OR idempotency_key = @idempotency_key::text)
  AND (@error_text::text = '' OR strpos(last_error, @error_text::text) > 0)
ORDER BY id DESC
LIMIT sqlc.arg('limit');

-- name: TaskListFinished :many
-- The tasks of one final status, the latest finished first, read backward
-- through leasegen_tasks_finished (the IN term proves its predicate).
-- Keyset: below (before_at, before_id).
SELECT * FROM leasegen_tasks
WHERE status IN ('SUCCESS', 'FAILED', 'CANCELLED') AND status = @status::text
  AND (@task_type::text = '' OR task_type = @task_type::text)
  AND (finished_at < @before_at::timestamptz OR (finished_at = @before_at::timestamptz AND id < @before_id::bigint))
ORDER BY finished_at DESC, id DESC
LIMIT sqlc.arg('limit');

-- name: TaskRetry :execrows
-- A FAILED or CANCELLED task runs again with all its attempts; a keyed
-- one waits for its key's slot again.
UPDATE leasegen_tasks SET
  status = CASE WHEN flow_key IS NULL THEN 'QUEUED' ELSE 'WAITING' END,
  available_at = now(),
  finished_at = NULL,
  free_attempts = attempt,
  updated_at = now()
WHERE id = $1 AND status IN ('FAILED', 'CANCELLED');

-- name: TaskCountPurgeable :one
-- What TaskPurge would delete, counted up to a cap, through
-- leasegen_tasks_finished.
SELECT COUNT(*) FROM (
  SELECT 1 FROM leasegen_tasks
  WHERE status IN ('SUCCESS', 'FAILED', 'CANCELLED')
    AND finished_at < now() - sqlc.arg(age_us)::bigint * interval '1 microsecond'
  LIMIT sqlc.arg('limit')
) AS purgeable;

-- name: TaskDiscard :execrows
-- Deletes a task that no worker holds: queued, or finished.
DELETE FROM leasegen_tasks WHERE id = $1 AND status NOT IN ('RUNNING', 'CANCEL_REQUESTED');

-- name: TaskPurge :execrows
-- One batch of finished tasks older than the cutoff, through
-- leasegen_tasks_finished; not the parents of waiting workflow steps
-- (see the MySQL query).
DELETE FROM leasegen_tasks
WHERE id IN (
  SELECT t.id FROM leasegen_tasks t
  WHERE t.status IN ('SUCCESS', 'FAILED', 'CANCELLED')
    AND t.finished_at < now() - sqlc.arg(age_us)::bigint * interval '1 microsecond'
    AND NOT EXISTS (SELECT 1 FROM leasegen_task_deps d JOIN leasegen_workflow_steps s ON s.task_id = d.child_id
                    WHERE d.parent_id = t.id AND s.waiting)
  LIMIT sqlc.arg('limit')
);

-- name: TaskProbe :one
-- The idle poll: one look into leasegen_tasks_queue. Paused types do not
-- count.
-- It also asks whether one of the worker's schedules is due.
SELECT EXISTS (
  SELECT 1 FROM leasegen_tasks t
  WHERE t.status = 'QUEUED'
    AND t.task_type = ANY(@task_types::text[])
    AND t.available_at <= now()
    AND t.task_type NOT IN (SELECT p.task_type FROM leasegen_paused_types p)
) AS claimable, EXISTS (
  SELECT 1 FROM leasegen_schedules s
  WHERE s.name = ANY(@schedule_names::text[]) AND s.next_run <= now() AND NOT s.paused
) AS schedules_due;

-- name: TaskLeasesExpired :one
-- A recovery pass looks first, without locks: most find nothing.
SELECT EXISTS (
  SELECT 1 FROM leasegen_tasks
  WHERE status IN ('RUNNING', 'CANCEL_REQUESTED')
    AND lease_until <= now()
) AS expired;
