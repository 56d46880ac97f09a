-- leasegen schema for SQLite, version 18: a workflow's end (see the MySQL
-- migration of the same number). SQLite runs the step in one transaction;
-- ended_at is Unix milliseconds, and the workflows not yet ended have a
-- partial index.
ALTER TABLE leasegen_workflows ADD COLUMN status TEXT;
ALTER TABLE leasegen_workflows ADD COLUMN ended_at INTEGER;
CREATE INDEX IF NOT EXISTS leasegen_workflows_open ON leasegen_workflows (id) WHERE ended_at IS NULL;
