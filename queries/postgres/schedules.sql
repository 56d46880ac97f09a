-- Queries on leasegen_schedules: a row per periodic schedule.

-- name: ScheduleNow :one
-- The database's clock, read once by a transaction that plans ticks.
SELECT now()::timestamptz AS now;

-- name: ScheduleGet :many
-- Registration locks the row it may rewrite (none while it is new).
SELECT * FROM leasegen_schedules WHERE name = $1 FOR UPDATE;

-- name: ScheduleInsert :exec
INSERT INTO leasegen_schedules
  (name, task_type, spec, misfire, overlap, payload, priority, max_attempts, next_run, registered_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, now());

-- name: ScheduleRedefine :exec
-- A worker registered the schedule again: its definition wins; next_run
-- is the stored one, or recomputed when the spec changed.
UPDATE leasegen_schedules
SET task_type = $2, spec = $3, misfire = $4, overlap = $5, payload = $6, priority = $7, max_attempts = $8,
    next_run = $9, registered_at = now()
WHERE name = $1;

-- name: ScheduleLockDue :many
-- The due, unpaused schedules among names, locked, skipping those another
-- worker is firing. last_status is the status of the latest tick's task
-- ('' when none is stored), for overlap=skip.
SELECT s.name, s.task_type, s.spec, s.payload, s.priority, s.max_attempts, s.next_run,
  COALESCE((SELECT t.status FROM leasegen_tasks t WHERE t.id = s.last_task_id), '')::text AS last_status
FROM leasegen_schedules s
WHERE s.name = ANY(@names::text[]) AND s.next_run <= @now::timestamptz AND NOT s.paused
ORDER BY s.name
FOR UPDATE OF s SKIP LOCKED;

-- name: ScheduleAdvance :execrows
-- Fenced on the next_run the firing transaction read.
UPDATE leasegen_schedules
SET next_run = @next_run,
    last_tick = COALESCE(sqlc.narg(last_tick), last_tick),
    last_enqueued_at = COALESCE(sqlc.narg(enqueued_at), last_enqueued_at),
    last_task_id = COALESCE(sqlc.narg(last_task_id), last_task_id),
    ticks = ticks + @enqueued::bigint,
    missed = missed + @missed::bigint
WHERE name = @name AND next_run = @from_next_run;

-- name: ScheduleList :many
SELECT * FROM leasegen_schedules ORDER BY name;

-- name: ScheduleSetPaused :execrows
UPDATE leasegen_schedules SET paused = @paused WHERE name = @name AND paused <> @paused;

-- name: ScheduleDelete :execrows
DELETE FROM leasegen_schedules WHERE name = $1;
