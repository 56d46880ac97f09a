-- name: WorkflowInsert :one
INSERT INTO leasegen_workflows (name, created_at) VALUES ($1, now()) RETURNING id;

-- name: WorkflowStepInsert :exec
INSERT INTO leasegen_workflow_steps (task_id, workflow_id, step, waiting) VALUES ($1, $2, $3, $4);

-- name: TaskDepInsert :exec
INSERT INTO leasegen_task_deps (parent_id, child_id, run_on_failure) VALUES ($1, $2, $3);

-- name: StepTasksWait :execrows
-- See the MySQL query.
UPDATE leasegen_tasks SET status = 'WAITING'
WHERE id = ANY(@ids::bigint[]) AND status = 'QUEUED' AND attempt = 0;

-- name: StepsWaitingChildren :many
SELECT DISTINCT d.child_id FROM leasegen_task_deps d
JOIN leasegen_workflow_steps s ON s.task_id = d.child_id
WHERE d.parent_id = ANY(@parents::bigint[]) AND s.waiting
ORDER BY d.child_id;

-- name: StepsLock :execrows
-- Locks the waiting steps' rows (see the MySQL query); the rows of one
-- UPDATE are locked in the order it reaches them, so the ids are locked
-- in id order first.
UPDATE leasegen_workflow_steps s SET version = s.version + 1
FROM (SELECT task_id FROM leasegen_workflow_steps
      WHERE task_id = ANY(@ids::bigint[]) AND waiting ORDER BY task_id FOR UPDATE) l
WHERE s.task_id = l.task_id;

-- name: StepParentStates :many
SELECT d.child_id, c.task_type AS child_type, c.status AS child_status, d.parent_id, p.status AS parent_status, d.run_on_failure
FROM leasegen_workflow_steps s
JOIN leasegen_task_deps d ON d.child_id = s.task_id
LEFT JOIN leasegen_tasks c ON c.id = s.task_id
LEFT JOIN leasegen_tasks p ON p.id = d.parent_id
WHERE s.task_id = ANY(@ids::bigint[]) AND s.waiting
ORDER BY d.child_id, d.parent_id;

-- name: StepTasksQueue :execrows
UPDATE leasegen_tasks SET status = 'QUEUED', updated_at = now()
WHERE id = ANY(@ids::bigint[]) AND status = 'WAITING' AND flow_key IS NULL;

-- name: StepTasksCancel :execrows
UPDATE leasegen_tasks SET
  status = 'CANCELLED',
  finished_at = now(),
  last_error = @last_error,
  updated_at = now()
WHERE id = ANY(@ids::bigint[]) AND status = 'WAITING' AND flow_key IS NULL;

-- name: StepsSettle :exec
UPDATE leasegen_workflow_steps SET waiting = FALSE WHERE task_id = ANY(@ids::bigint[]);

-- name: StepsWaitingAfter :many
SELECT task_id FROM leasegen_workflow_steps
WHERE waiting AND task_id > $1
ORDER BY task_id
LIMIT $2;

-- name: StepsWaitingAny :one
SELECT EXISTS (SELECT 1 FROM leasegen_workflow_steps WHERE waiting) AS waiting;

-- name: StepParents :many
SELECT ps.step, d.parent_id, p.status, p.result
FROM leasegen_task_deps d
JOIN leasegen_workflow_steps ps ON ps.task_id = d.parent_id
LEFT JOIN leasegen_tasks p ON p.id = d.parent_id
WHERE d.child_id = $1
ORDER BY ps.step;

-- name: WorkflowGet :one
SELECT id, name, created_at, status, ended_at FROM leasegen_workflows WHERE id = $1;

-- name: WorkflowStepList :many
SELECT s.step, s.task_id, s.waiting, t.status
FROM leasegen_workflow_steps s
LEFT JOIN leasegen_tasks t ON t.id = s.task_id
WHERE s.workflow_id = $1
ORDER BY s.step;

-- name: WorkflowDepList :many
SELECT ps.step AS parent_step, cs.step AS child_step, d.run_on_failure
FROM leasegen_workflow_steps cs
JOIN leasegen_task_deps d ON d.child_id = cs.task_id
JOIN leasegen_workflow_steps ps ON ps.task_id = d.parent_id
WHERE cs.workflow_id = $1
ORDER BY cs.step, ps.step;

-- name: StepOrphans :many
SELECT s.task_id FROM leasegen_workflow_steps s
LEFT JOIN leasegen_tasks t ON t.id = s.task_id
WHERE t.id IS NULL
LIMIT $1;

-- name: StepDeleteTasks :execrows
DELETE FROM leasegen_workflow_steps WHERE task_id = ANY(@task_ids::bigint[]);

-- name: TaskDepDeleteChildren :exec
DELETE FROM leasegen_task_deps WHERE child_id = ANY(@task_ids::bigint[]);

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
WHERE d.parent_id = ANY(@parents::bigint[]) AND NOT s.waiting
  AND c.status = 'CANCELLED' AND c.last_error = @last_error
ORDER BY d.child_id;

-- name: StepTasksRevive :execrows
UPDATE leasegen_tasks SET
  status = 'WAITING',
  finished_at = NULL,
  last_error = NULL,
  updated_at = now()
WHERE id = ANY(@ids::bigint[]) AND status = 'CANCELLED' AND flow_key IS NULL;

-- name: StepsUnsettle :exec
UPDATE leasegen_workflow_steps SET waiting = TRUE WHERE task_id = ANY(@ids::bigint[]);

-- name: WorkflowList :many
SELECT w.id, w.name, w.created_at, w.status, w.ended_at,
  COUNT(s.task_id)::bigint AS steps,
  COUNT(*) FILTER (WHERE t.status = 'SUCCESS')::bigint AS succeeded,
  COUNT(*) FILTER (WHERE t.status IN ('FAILED', 'CANCELLED'))::bigint AS failed
FROM leasegen_workflows w
LEFT JOIN leasegen_workflow_steps s ON s.workflow_id = w.id
LEFT JOIN leasegen_tasks t ON t.id = s.task_id
GROUP BY w.id, w.name, w.created_at, w.status, w.ended_at
ORDER BY w.id DESC
LIMIT $1;

-- name: StepOf :one
SELECT workflow_id, step FROM leasegen_workflow_steps WHERE task_id = $1;

-- name: TaskDepsCopy :exec
INSERT INTO leasegen_task_deps (parent_id, child_id, run_on_failure)
SELECT @to_id::bigint, d.child_id, d.run_on_failure FROM leasegen_task_deps d WHERE d.parent_id = @from_id::bigint;

-- name: WorkflowsOpen :many
-- See the MySQL query.
SELECT w.id, w.name,
  COUNT(s.task_id)::bigint AS steps,
  COUNT(*) FILTER (WHERE t.id IS NOT NULL AND t.status NOT IN ('SUCCESS', 'FAILED', 'CANCELLED'))::bigint AS unfinished,
  COUNT(*) FILTER (WHERE t.status = 'SUCCESS')::bigint AS succeeded,
  COUNT(*) FILTER (WHERE t.status = 'FAILED')::bigint AS failed,
  COALESCE((EXTRACT(EPOCH FROM MAX(COALESCE(t.finished_at, t.updated_at)) - w.created_at) * 1000000)::bigint, 0)::bigint AS took_us
FROM (SELECT o.id, o.name, o.created_at FROM leasegen_workflows o
      WHERE o.ended_at IS NULL AND o.id > @after ORDER BY o.id LIMIT sqlc.arg('limit')) w
LEFT JOIN leasegen_workflow_steps s ON s.workflow_id = w.id
LEFT JOIN leasegen_tasks t ON t.id = s.task_id
GROUP BY w.id, w.name, w.created_at
ORDER BY w.id;

-- name: WorkflowEnd :execrows
-- See the MySQL query.
UPDATE leasegen_workflows SET
  status = sqlc.arg(status),
  ended_at = created_at + make_interval(secs => sqlc.arg(took_us)::bigint / 1000000.0)
WHERE id = sqlc.arg(id)::bigint AND ended_at IS NULL
  AND NOT EXISTS (SELECT 1 FROM leasegen_workflow_steps s
                  JOIN leasegen_tasks t ON t.id = s.task_id
                  WHERE s.workflow_id = leasegen_workflows.id AND t.status NOT IN ('SUCCESS', 'FAILED', 'CANCELLED'));

-- name: WorkflowReopen :exec
UPDATE leasegen_workflows SET status = NULL, ended_at = NULL
WHERE id = (SELECT workflow_id FROM leasegen_workflow_steps WHERE task_id = $1);

-- name: ParentTypeAdd :exec
INSERT INTO leasegen_parent_types (task_type) VALUES ($1) ON CONFLICT DO NOTHING;

-- name: ParentTypeList :many
SELECT task_type FROM leasegen_parent_types ORDER BY task_type;
