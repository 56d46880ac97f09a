-- leasegen schema for SQLite, version 6: task metadata and paused task
-- types (see the MySQL migration of the same number). SQLite runs the step
-- in one transaction.
ALTER TABLE leasegen_tasks ADD COLUMN metadata TEXT;
CREATE TABLE IF NOT EXISTS leasegen_paused_types (
  task_type TEXT    NOT NULL PRIMARY KEY,
  paused_at INTEGER NOT NULL
);
