-- leasegen schema for PostgreSQL, version 18: a workflow's end (see the
-- MySQL migration of the same number). The workflows not yet ended have a
-- partial index.
ALTER TABLE leasegen_workflows ADD COLUMN IF NOT EXISTS status TEXT NULL;
ALTER TABLE leasegen_workflows ADD COLUMN IF NOT EXISTS ended_at TIMESTAMPTZ NULL;
CREATE INDEX IF NOT EXISTS leasegen_workflows_open ON leasegen_workflows (id) WHERE ended_at IS NULL;
