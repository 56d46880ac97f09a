-- Queries on leasegen_attempts: the attempts that did not end their task.

-- name: AttemptInsert :exec
-- An attempt recorded twice (a retried write) keeps its first row. Its
-- finished_at is the given instant, or the database's clock without one.
INSERT IGNORE INTO leasegen_attempts
  (task_id, attempt, worker, started_at, finished_at, outcome, error, duration_us)
VALUES (?, ?, ?, ?, COALESCE(sqlc.narg(finished_at), NOW(3)), ?, ?, ?);

-- name: AttemptTrim :exec
-- Keeps a task's latest attempts: those above its newest recorded less
-- the given number, whatever order the records came in (a late record of
-- an older attempt goes at the next trim). The newest is read through a
-- derived table: MySQL refuses a subquery on the table a DELETE changes.
DELETE FROM leasegen_attempts WHERE leasegen_attempts.task_id = sqlc.arg(task_id) AND leasegen_attempts.attempt <= (
  SELECT top FROM (SELECT MAX(newer.attempt) - sqlc.arg(keep) AS top FROM leasegen_attempts newer WHERE newer.task_id = sqlc.arg(task_id)) newest);

-- name: AttemptList :many
SELECT * FROM leasegen_attempts WHERE task_id = ? ORDER BY attempt;

-- name: AttemptOrphans :many
-- Tasks retention deleted whose attempts are still stored.
SELECT DISTINCT a.task_id FROM leasegen_attempts a
LEFT JOIN leasegen_tasks t ON t.id = a.task_id
WHERE t.id IS NULL
LIMIT ?;

-- name: AttemptDeleteTasks :execrows
DELETE FROM leasegen_attempts WHERE task_id IN (sqlc.slice(task_ids));
