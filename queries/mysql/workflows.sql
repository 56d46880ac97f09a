-- name: WorkflowInsert :execlastid
INSERT INTO leasegen_workflows (name, created_at) VALUES (?, NOW(3));

-- name: WorkflowStepInsert :exec
INSERT INTO leasegen_workflow_steps (task_id, workflow_id, step, waiting) VALUES (?, ?, ?, ?);

-- name: TaskDepInsert :exec
INSERT INTO leasegen_task_deps (parent_id, child_id, run_on_failure) VALUES (?, ?, ?);

-- name: StepTasksWait :execrows
-- The steps with parents that a workflow's enqueue inserted, QUEUED and
-- not yet committed, wait for their parents instead.
UPDATE leasegen_tasks SET status = 'WAITING', due_priority = 0
WHERE id IN (sqlc.slice(ids)) AND status = 'QUEUED' AND attempt = 0;

-- name: StepsWaitingChildren :many
SELECT DISTINCT d.child_id FROM leasegen_task_deps d
JOIN leasegen_workflow_steps s ON s.task_id = d.child_id
WHERE d.parent_id IN (sqlc.slice(parents)) AND s.waiting
ORDER BY d.child_id;

-- name: StepsLock :execrows
-- Locks the waiting steps' rows by writing them (Galera certifies written
-- rows only), in id order.
UPDATE leasegen_workflow_steps SET version = version + 1
WHERE task_id IN (sqlc.slice(ids)) AND waiting
ORDER BY task_id;

-- name: StepParentStates :many
-- Each waiting step of ids with its task's status and each parent's, NULL
-- for a task that no longer exists (a discarded step is decided: ended). Plain reads under READ COMMITTED:
-- what committed last.
SELECT d.child_id, c.task_type AS child_type, c.status AS child_status, d.parent_id,
  p.status AS parent_status, d.run_on_failure
FROM leasegen_workflow_steps s
JOIN leasegen_task_deps d ON d.child_id = s.task_id
LEFT JOIN leasegen_tasks c ON c.id = s.task_id
LEFT JOIN leasegen_tasks p ON p.id = d.parent_id
WHERE s.task_id IN (sqlc.slice(ids)) AND s.waiting
ORDER BY d.child_id, d.parent_id;

-- name: StepTasksQueue :execrows
-- Steps whose parents ended join the queue at their place (their
-- available_at, from their enqueue).
UPDATE leasegen_tasks SET
  status = 'QUEUED',
  due_priority = priority,
  due_at = available_at,
  updated_at = NOW(3)
WHERE id IN (sqlc.slice(ids)) AND status = 'WAITING' AND flow_key IS NULL;

-- name: StepTasksCancel :execrows
UPDATE leasegen_tasks SET
  due_at = NOW(3),
  due_priority = 0,
  status = 'CANCELLED',
  last_error = sqlc.arg(last_error),
  updated_at = NOW(3)
WHERE id IN (sqlc.slice(ids)) AND status = 'WAITING' AND flow_key IS NULL;

-- name: StepsSettle :exec
UPDATE leasegen_workflow_steps SET waiting = FALSE WHERE task_id IN (sqlc.slice(ids));

-- name: StepsWaitingAfter :many
-- Recovery's pass over the waiting steps, a page at a time in id order
-- from after: a range of leasegen_workflow_steps_waiting.
SELECT task_id FROM leasegen_workflow_steps
WHERE waiting AND task_id > ?
ORDER BY task_id
LIMIT ?;

-- name: StepsWaitingAny :one
SELECT EXISTS (SELECT 1 FROM leasegen_workflow_steps WHERE waiting) AS waiting;

-- name: StepParents :many
-- A step's parents, by step name, with their statuses and results.
SELECT ps.step, d.parent_id, p.status, p.result
FROM leasegen_task_deps d
JOIN leasegen_workflow_steps ps ON ps.task_id = d.parent_id
LEFT JOIN leasegen_tasks p ON p.id = d.parent_id
WHERE d.child_id = ?
ORDER BY ps.step;

-- name: WorkflowGet :one
SELECT id, name, created_at, status, ended_at FROM leasegen_workflows WHERE id = ?;

-- name: WorkflowStepList :many
-- A workflow's steps by name, with their tasks' statuses (NULL for a task
-- that no longer exists).
SELECT s.step, s.task_id, s.waiting, t.status
FROM leasegen_workflow_steps s
LEFT JOIN leasegen_tasks t ON t.id = s.task_id
WHERE s.workflow_id = ?
ORDER BY s.step;

-- name: WorkflowDepList :many
-- A workflow's edges, parent step to child step.
SELECT ps.step AS parent_step, cs.step AS child_step, d.run_on_failure
FROM leasegen_workflow_steps cs
JOIN leasegen_task_deps d ON d.child_id = cs.task_id
JOIN leasegen_workflow_steps ps ON ps.task_id = d.parent_id
WHERE cs.workflow_id = ?
ORDER BY cs.step, ps.step;

-- name: StepOrphans :many
-- Steps whose tasks retention (or a discard) deleted.
SELECT s.task_id FROM leasegen_workflow_steps s
LEFT JOIN leasegen_tasks t ON t.id = s.task_id
WHERE t.id IS NULL
LIMIT ?;

-- name: StepDeleteTasks :execrows
DELETE FROM leasegen_workflow_steps WHERE task_id IN (sqlc.slice(task_ids));

-- name: TaskDepDeleteChildren :exec
DELETE FROM leasegen_task_deps WHERE child_id IN (sqlc.slice(task_ids));

-- name: WorkflowDeleteEmpty :execrows
-- Workflows none of whose steps is stored any more.
DELETE FROM leasegen_workflows
WHERE NOT EXISTS (SELECT 1 FROM leasegen_workflow_steps s WHERE s.workflow_id = leasegen_workflows.id)
LIMIT ?;

-- name: StepsCancelledChildren :many
-- The children of parents that a settle cancelled for a parent's failure
-- (their last error says so), decided already.
SELECT d.child_id FROM leasegen_task_deps d
JOIN leasegen_workflow_steps s ON s.task_id = d.child_id
JOIN leasegen_tasks c ON c.id = d.child_id
WHERE d.parent_id IN (sqlc.slice(parents)) AND NOT s.waiting
  AND c.status = 'CANCELLED' AND c.last_error = sqlc.arg(last_error)
ORDER BY d.child_id;

-- name: StepTasksRevive :execrows
-- Steps a cascade cancelled wait again, for a retried parent.
UPDATE leasegen_tasks SET
  due_priority = 0,
  status = 'WAITING',
  last_error = NULL,
  updated_at = NOW(3)
WHERE id IN (sqlc.slice(ids)) AND status = 'CANCELLED' AND flow_key IS NULL;

-- name: StepsUnsettle :exec
UPDATE leasegen_workflow_steps SET waiting = TRUE WHERE task_id IN (sqlc.slice(ids));

-- name: WorkflowList :many
-- The latest workflows, newest first, with their steps counted by state.
SELECT w.id, w.name, w.created_at, w.status, w.ended_at,
  CAST(COUNT(s.task_id) AS SIGNED) AS steps,
  CAST(COALESCE(SUM(CASE WHEN t.status = 'SUCCESS' THEN 1 ELSE 0 END), 0) AS SIGNED) AS succeeded,
  CAST(COALESCE(SUM(CASE WHEN t.status IN ('FAILED', 'CANCELLED') THEN 1 ELSE 0 END), 0) AS SIGNED) AS failed
FROM leasegen_workflows w
LEFT JOIN leasegen_workflow_steps s ON s.workflow_id = w.id
LEFT JOIN leasegen_tasks t ON t.id = s.task_id
GROUP BY w.id, w.name, w.created_at, w.status, w.ended_at
ORDER BY w.id DESC
LIMIT ?;

-- name: StepOf :one
-- The workflow and name of task id's step.
SELECT workflow_id, step FROM leasegen_workflow_steps WHERE task_id = ?;

-- name: TaskDepsCopy :exec
-- A spawned step runs before the steps its spawner runs before: it gets
-- the spawner's edges to them.
INSERT INTO leasegen_task_deps (parent_id, child_id, run_on_failure)
SELECT sqlc.arg(to_id), d.child_id, d.run_on_failure FROM leasegen_task_deps d WHERE d.parent_id = sqlc.arg(from_id);

-- name: WorkflowsOpen :many
-- A page of the workflows not yet ended, after a cursor in id order, with
-- their steps counted (unfinished: not ended, and its task still stored)
-- and the time from the enqueue to the last step's end (a finished task's
-- due_at is its end; the figure counts once every step ended). Plain
-- reads.
SELECT w.id, w.name,
  CAST(COUNT(s.task_id) AS SIGNED) AS steps,
  CAST(COALESCE(SUM(CASE WHEN t.id IS NOT NULL AND t.status NOT IN ('SUCCESS', 'FAILED', 'CANCELLED') THEN 1 ELSE 0 END), 0) AS SIGNED) AS unfinished,
  CAST(COALESCE(SUM(CASE WHEN t.status = 'SUCCESS' THEN 1 ELSE 0 END), 0) AS SIGNED) AS succeeded,
  CAST(COALESCE(SUM(CASE WHEN t.status = 'FAILED' THEN 1 ELSE 0 END), 0) AS SIGNED) AS failed,
  CAST(COALESCE(TIMESTAMPDIFF(MICROSECOND, w.created_at, MAX(t.due_at)), 0) AS SIGNED) AS took_us
FROM (SELECT o.id, o.name, o.created_at FROM leasegen_workflows o
      WHERE o.ended_at IS NULL AND o.id > sqlc.arg(after) ORDER BY o.id LIMIT ?) w
LEFT JOIN leasegen_workflow_steps s ON s.workflow_id = w.id
LEFT JOIN leasegen_tasks t ON t.id = s.task_id
GROUP BY w.id, w.name, w.created_at
ORDER BY w.id;

-- name: WorkflowEnd :execrows
-- Ends a workflow found with every step ended, once: the process whose
-- write changed the row counts the end. It checks again that no step is
-- left: a retry that queued one since the read wrote the row too, so the
-- two writes are ordered by its lock.
UPDATE leasegen_workflows SET
  status = sqlc.arg(status),
  ended_at = created_at + INTERVAL sqlc.arg(took_us) MICROSECOND
WHERE leasegen_workflows.id = sqlc.arg(id) AND ended_at IS NULL
  AND NOT EXISTS (SELECT 1 FROM leasegen_workflow_steps s
                  JOIN leasegen_tasks t ON t.id = s.task_id
                  WHERE s.workflow_id = leasegen_workflows.id AND t.status NOT IN ('SUCCESS', 'FAILED', 'CANCELLED'));

-- name: WorkflowReopen :exec
-- A retried step's workflow has not ended.
UPDATE leasegen_workflows SET status = NULL, ended_at = NULL
WHERE id = (SELECT workflow_id FROM leasegen_workflow_steps WHERE task_id = ?);

-- name: ParentTypeAdd :exec
-- A task type whose tasks may have waiting children (a duplicate writes
-- nothing).
INSERT IGNORE INTO leasegen_parent_types (task_type) VALUES (?);

-- name: ParentTypeList :many
SELECT task_type FROM leasegen_parent_types ORDER BY task_type;
