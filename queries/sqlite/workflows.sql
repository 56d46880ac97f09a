-- name: WorkflowInsert :one
INSERT INTO leasegen_workflows (name, created_at)
VALUES (?, (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER))) RETURNING id;

-- name: WorkflowStepInsert :exec
INSERT INTO leasegen_workflow_steps (task_id, workflow_id, step, waiting) VALUES (?, ?, ?, ?);

-- name: TaskDepInsert :exec
INSERT INTO leasegen_task_deps (parent_id, child_id, run_on_failure) VALUES (?, ?, ?);

-- name: StepTasksWait :execrows
-- See the MySQL query.
UPDATE leasegen_tasks SET status = 'WAITING'
WHERE id IN (sqlc.slice(ids)) AND status = 'QUEUED' AND attempt = 0;

-- name: StepsWaitingChildren :many
SELECT DISTINCT d.child_id FROM leasegen_task_deps d
JOIN leasegen_workflow_steps s ON s.task_id = d.child_id
WHERE d.parent_id IN (sqlc.slice(parents)) AND s.waiting
ORDER BY d.child_id;

-- name: StepsLock :execrows
-- SQLite's write transactions are serialized already: the write is kept
-- for the same count as the other engines'.
UPDATE leasegen_workflow_steps SET version = version + 1
WHERE task_id IN (sqlc.slice(ids)) AND waiting;

-- name: StepParentStates :many
SELECT d.child_id, c.task_type AS child_type, c.status AS child_status, d.parent_id, p.status AS parent_status, d.run_on_failure
FROM leasegen_workflow_steps s
JOIN leasegen_task_deps d ON d.child_id = s.task_id
LEFT JOIN leasegen_tasks c ON c.id = s.task_id
LEFT JOIN leasegen_tasks p ON p.id = d.parent_id
WHERE s.task_id IN (sqlc.slice(ids)) AND s.waiting
ORDER BY d.child_id, d.parent_id;

-- name: StepTasksQueue :execrows
UPDATE leasegen_tasks SET
  status = 'QUEUED',
  due_at = available_at,
  updated_at = (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER))
WHERE status = 'WAITING' AND flow_key IS NULL AND id IN (sqlc.slice(ids));

-- name: StepTasksCancel :execrows
UPDATE leasegen_tasks SET
  due_at = (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)),
  status = 'CANCELLED',
  last_error = sqlc.arg(last_error),
  updated_at = (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER))
WHERE status = 'WAITING' AND flow_key IS NULL AND id IN (sqlc.slice(ids));

-- name: StepsSettle :exec
UPDATE leasegen_workflow_steps SET waiting = 0 WHERE task_id IN (sqlc.slice(ids));

-- name: StepsWaitingAfter :many
SELECT task_id FROM leasegen_workflow_steps
WHERE waiting AND task_id > ?
ORDER BY task_id
LIMIT ?;

-- name: StepsWaitingAny :one
SELECT EXISTS (SELECT 1 FROM leasegen_workflow_steps WHERE waiting) AS waiting;

-- name: StepParents :many
SELECT ps.step, d.parent_id, p.status, p.result
FROM leasegen_task_deps d
JOIN leasegen_workflow_steps ps ON ps.task_id = d.parent_id
LEFT JOIN leasegen_tasks p ON p.id = d.parent_id
WHERE d.child_id = ?
ORDER BY ps.step;

-- name: WorkflowGet :one
SELECT id, name, created_at, status, ended_at FROM leasegen_workflows WHERE id = ?;

-- name: WorkflowStepList :many
SELECT s.step, s.task_id, s.waiting, t.status
FROM leasegen_workflow_steps s
LEFT JOIN leasegen_tasks t ON t.id = s.task_id
WHERE s.workflow_id = ?
ORDER BY s.step;

-- name: WorkflowDepList :many
SELECT ps.step AS parent_step, cs.step AS child_step, d.run_on_failure
FROM leasegen_workflow_steps cs
JOIN leasegen_task_deps d ON d.child_id = cs.task_id
JOIN leasegen_workflow_steps ps ON ps.task_id = d.parent_id
WHERE cs.workflow_id = ?
ORDER BY cs.step, ps.step;

-- name: StepOrphans :many
SELECT s.task_id FROM leasegen_workflow_steps s
LEFT JOIN leasegen_tasks t ON t.id = s.task_id
WHERE t.id IS NULL
LIMIT ?;

-- name: StepDeleteTasks :execrows
DELETE FROM leasegen_workflow_steps WHERE task_id IN (sqlc.slice(task_ids));

-- name: TaskDepDeleteChildren :exec
DELETE FROM leasegen_task_deps WHERE child_id IN (sqlc.slice(task_ids));

-- name: WorkflowDeleteEmpty :execrows
DELETE FROM leasegen_workflows
WHERE id IN (
  SELECT w.id FROM leasegen_workflows w
  WHERE NOT EXISTS (SELECT 1 FROM leasegen_workflow_steps s WHERE s.workflow_id = w.id)
  LIMIT sqlc.arg('limit'));

-- name: StepsCancelledChildren :many
SELECT d.child_id FROM leasegen_task_deps d
JOIN leasegen_workflow_steps s ON s.task_id = d.child_id
JOIN leasegen_tasks c ON c.id = d.child_id
WHERE c.status = 'CANCELLED' AND c.last_error = sqlc.arg(last_error)
  AND NOT s.waiting AND d.parent_id IN (sqlc.slice(parents))
ORDER BY d.child_id;

-- name: StepTasksRevive :execrows
UPDATE leasegen_tasks SET
  status = 'WAITING',
  last_error = NULL,
  updated_at = (SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER))
WHERE status = 'CANCELLED' AND flow_key IS NULL AND id IN (sqlc.slice(ids));

-- name: StepsUnsettle :exec
UPDATE leasegen_workflow_steps SET waiting = 1 WHERE task_id IN (sqlc.slice(ids));

-- name: WorkflowList :many
SELECT w.id, w.name, w.created_at, w.status, w.ended_at,
  CAST(COUNT(s.task_id) AS INTEGER) AS steps,
  CAST(COALESCE(SUM(t.status = 'SUCCESS'), 0) AS INTEGER) AS succeeded,
  CAST(COALESCE(SUM(t.status IN ('FAILED', 'CANCELLED')), 0) AS INTEGER) AS failed
FROM leasegen_workflows w
LEFT JOIN leasegen_workflow_steps s ON s.workflow_id = w.id
LEFT JOIN leasegen_tasks t ON t.id = s.task_id
GROUP BY w.id, w.name, w.created_at, w.status, w.ended_at
ORDER BY w.id DESC
LIMIT ?;

-- name: StepOf :one
SELECT workflow_id, step FROM leasegen_workflow_steps WHERE task_id = ?;

-- name: TaskDepsCopy :exec
INSERT INTO leasegen_task_deps (parent_id, child_id, run_on_failure)
SELECT sqlc.arg(to_id), d.child_id, d.run_on_failure FROM leasegen_task_deps d WHERE d.parent_id = sqlc.arg(from_id);

-- name: WorkflowsOpen :many
-- See the MySQL query; instants are Unix milliseconds.
SELECT w.id, w.name,
  CAST(COUNT(s.task_id) AS INTEGER) AS steps,
  CAST(COALESCE(SUM(t.id IS NOT NULL AND t.status NOT IN ('SUCCESS', 'FAILED', 'CANCELLED')), 0) AS INTEGER) AS unfinished,
  CAST(COALESCE(SUM(t.status = 'SUCCESS'), 0) AS INTEGER) AS succeeded,
  CAST(COALESCE(SUM(t.status = 'FAILED'), 0) AS INTEGER) AS failed,
  CAST(COALESCE(MAX(t.due_at) - w.created_at, 0) * 1000 AS INTEGER) AS took_us
FROM (SELECT o.id, o.name, o.created_at FROM leasegen_workflows o
      WHERE o.ended_at IS NULL AND o.id > sqlc.arg(after) ORDER BY o.id LIMIT sqlc.arg('limit')) w
LEFT JOIN leasegen_workflow_steps s ON s.workflow_id = w.id
LEFT JOIN leasegen_tasks t ON t.id = s.task_id
GROUP BY w.id, w.name, w.created_at
ORDER BY w.id;

-- name: WorkflowEnd :execrows
-- See the MySQL query.
UPDATE leasegen_workflows SET
  status = sqlc.arg(status),
  ended_at = created_at + sqlc.arg(took_us) / 1000
WHERE leasegen_workflows.id = sqlc.arg(id) AND ended_at IS NULL
  AND NOT EXISTS (SELECT 1 FROM leasegen_workflow_steps s
                  JOIN leasegen_tasks t ON t.id = s.task_id
                  WHERE s.workflow_id = leasegen_workflows.id AND t.status NOT IN ('SUCCESS', 'FAILED', 'CANCELLED'));

-- name: WorkflowReopen :exec
UPDATE leasegen_workflows SET status = NULL, ended_at = NULL
WHERE id = (SELECT workflow_id FROM leasegen_workflow_steps WHERE task_id = ?);

-- name: ParentTypeAdd :exec
INSERT OR IGNORE INTO leasegen_parent_types (task_type) VALUES (?);

-- name: ParentTypeList :many
SELECT task_type FROM leasegen_parent_types ORDER BY task_type;
