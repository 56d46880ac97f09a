-- What runtime/migrations/mysql/0018_workflow_ends.sql does to
-- leasegen_workflows, as plain DDL for sqlc (see mysql_0004.sql). Never
-- applied to a database.
ALTER TABLE leasegen_workflows
  ADD COLUMN status VARCHAR(16) NULL,
  ADD COLUMN ended_at DATETIME(3) NULL;
