-- Queries on leasegen_schedules: a row per periodic schedule.

-- name: ScheduleNow :one
-- The database's clock in Unix milliseconds, read once by a transaction that plans ticks.
SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER) AS now;

-- name: ScheduleGet :many
-- Registration runs under the write lock.
SELECT * FROM leasegen_schedules WHERE name = ?;

-- name: ScheduleInsert :exec
INSERT INTO leasegen_schedules
  (name, task_type, spec, misfire, overlap, payload, priority, max_attempts, next_run, registered_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)));

-- name: ScheduleRedefine :exec
-- A worker registered the schedule again: its definition wins; next_run
-- is the stored one, or recomputed when the spec changed.
UPDATE leasegen_schedules
SET task_type = ?, spec = ?, misfire = ?, overlap = ?, payload = ?, priority = ?, max_attempts = ?,
    next_run = ?, registered_at = (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER))
WHERE name = ?;

-- name: ScheduleLockDue :many
-- The due, unpaused schedules among names, read under the write lock, which
-- serializes firing workers. last_status is the status of the latest tick's task
-- ('' when none is stored), for overlap=skip. The slice comes last (see
-- flow_keys.sql).
SELECT s.name, s.task_type, s.spec, s.payload, s.priority, s.max_attempts, s.next_run,
  COALESCE((SELECT t.status FROM leasegen_tasks t WHERE t.id = s.last_task_id), '') AS last_status
FROM leasegen_schedules s
WHERE s.next_run <= sqlc.arg(now) AND s.paused = 0 AND s.name IN (sqlc.slice(names))
ORDER BY s.name;

-- name: ScheduleAdvance :execrows
-- Fenced on the next_run the firing transaction read.
UPDATE leasegen_schedules
SET next_run = sqlc.arg(next_run),
    last_tick = COALESCE(sqlc.narg(last_tick), last_tick),
    last_enqueued_at = COALESCE(sqlc.narg(enqueued_at), last_enqueued_at),
    last_task_id = COALESCE(sqlc.narg(last_task_id), last_task_id),
    ticks = ticks + sqlc.arg(enqueued),
    missed = missed + sqlc.arg(missed)
WHERE name = sqlc.arg(name) AND next_run = sqlc.arg(from_next_run);

-- name: ScheduleList :many
SELECT * FROM leasegen_schedules ORDER BY name;

-- name: ScheduleSetPaused :execrows
UPDATE leasegen_schedules SET paused = sqlc.arg(paused) WHERE name = sqlc.arg(name) AND paused <> sqlc.arg(paused);

-- name: ScheduleDelete :execrows
DELETE FROM leasegen_schedules WHERE name = ?;
