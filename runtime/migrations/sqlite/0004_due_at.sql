-- leasegen schema for SQLite, version 4: due_at, as on MySQL. It is the
-- instant at which a task next needs attention: when a queued task may be
-- claimed, when a running task's lease ends, when a finished task finished.
-- It replaces lease_until and finished_at; available_at keeps a queued
-- task's place, which a recovered or released task returns to. The partial
-- indexes stay as they were, keyed by due_at. SQLite runs the step in one
-- transaction.
ALTER TABLE leasegen_tasks ADD COLUMN due_at INTEGER NOT NULL DEFAULT 0;
UPDATE leasegen_tasks SET due_at = CASE
  WHEN status = 'QUEUED' THEN available_at
  WHEN status IN ('RUNNING', 'CANCEL_REQUESTED') THEN COALESCE(lease_until, updated_at)
  ELSE COALESCE(finished_at, lease_until, updated_at)
END;
DROP INDEX IF EXISTS leasegen_tasks_queue;
DROP INDEX IF EXISTS leasegen_tasks_leases;
DROP INDEX IF EXISTS leasegen_tasks_finished;
ALTER TABLE leasegen_tasks DROP COLUMN lease_until;
ALTER TABLE leasegen_tasks DROP COLUMN finished_at;
CREATE INDEX leasegen_tasks_queue ON leasegen_tasks (status, priority DESC, due_at, id, task_type)
  WHERE status = 'QUEUED';
CREATE INDEX leasegen_tasks_leases ON leasegen_tasks (status, due_at, task_type)
  WHERE status IN ('RUNNING', 'CANCEL_REQUESTED');
CREATE INDEX leasegen_tasks_finished ON leasegen_tasks (due_at)
  WHERE status IN ('SUCCESS', 'FAILED', 'CANCELLED');
