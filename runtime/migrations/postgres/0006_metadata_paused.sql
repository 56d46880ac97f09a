-- leasegen schema for PostgreSQL, version 6: task metadata and paused task
-- types (see the MySQL migration of the same number). Adding a nullable
-- column without a default rewrites nothing.
ALTER TABLE leasegen_tasks ADD COLUMN IF NOT EXISTS metadata TEXT NULL;
CREATE TABLE IF NOT EXISTS leasegen_paused_types (
  task_type TEXT        NOT NULL PRIMARY KEY,
  paused_at TIMESTAMPTZ NOT NULL
);
