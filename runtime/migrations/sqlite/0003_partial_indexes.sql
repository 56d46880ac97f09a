-- leasegen schema for SQLite, version 3: partial indexes, so that a task's
-- status changes touch only the indexes of the states it leaves and enters.
-- - leasegen_tasks_queue holds only queued tasks, in claim order;
-- - leasegen_tasks_leases only running ones, by lease expiry (recovery,
--   running counts by type);
-- - leasegen_tasks_by_owner has no status, which a status change would move;
-- - leasegen_tasks_finished only finished ones (retention).
-- The counts by status that leasegen_tasks_stats served read these. Each
-- partial index still leads with status, so that the planner sees the
-- queries' status terms match it.
DROP INDEX IF EXISTS leasegen_tasks_claim;
DROP INDEX IF EXISTS leasegen_tasks_recover;
DROP INDEX IF EXISTS leasegen_tasks_owner;
DROP INDEX IF EXISTS leasegen_tasks_stats;
DROP INDEX IF EXISTS leasegen_tasks_finished;
CREATE INDEX IF NOT EXISTS leasegen_tasks_queue ON leasegen_tasks (status, priority DESC, available_at, id, task_type)
  WHERE status = 'QUEUED';
CREATE INDEX IF NOT EXISTS leasegen_tasks_leases ON leasegen_tasks (status, lease_until, task_type)
  WHERE status IN ('RUNNING', 'CANCEL_REQUESTED');
CREATE INDEX IF NOT EXISTS leasegen_tasks_by_owner ON leasegen_tasks (owner_id, created_at);
CREATE INDEX IF NOT EXISTS leasegen_tasks_finished ON leasegen_tasks (finished_at)
  WHERE finished_at IS NOT NULL;
UPDATE leasegen_tasks SET lease_until = finished_at
WHERE status IN ('SUCCESS', 'FAILED', 'CANCELLED') AND lease_until IS NULL;
