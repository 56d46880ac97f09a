-- Queries on leasegen_attempts: the attempts that did not end their task.

-- name: AttemptInsert :exec
-- An attempt recorded twice (a retried write) keeps its first row. Its
-- finished_at is the given instant, or the database's clock without one.
INSERT OR IGNORE INTO leasegen_attempts
  (task_id, attempt, worker, started_at, finished_at, outcome, error, duration_us)
VALUES (@task_id, @attempt, @worker, @started_at,
  COALESCE(sqlc.narg(finished_at), (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER))), @outcome, @error, @duration_us);

-- name: AttemptTrim :exec
-- See the MySQL query.
DELETE FROM leasegen_attempts WHERE leasegen_attempts.task_id = sqlc.arg(task_id) AND leasegen_attempts.attempt <= (
  SELECT MAX(newer.attempt) - sqlc.arg(keep) FROM leasegen_attempts newer WHERE newer.task_id = sqlc.arg(task_id));

-- name: AttemptList :many
SELECT * FROM leasegen_attempts WHERE task_id = ? ORDER BY attempt;

-- name: AttemptOrphans :many
-- Tasks retention deleted whose attempts are still stored.
SELECT DISTINCT a.task_id FROM leasegen_attempts a
LEFT JOIN leasegen_tasks t ON t.id = a.task_id
WHERE t.id IS NULL
LIMIT sqlc.arg('limit');

-- name: AttemptDeleteTasks :execrows
DELETE FROM leasegen_attempts WHERE task_id IN (sqlc.slice(task_ids));
