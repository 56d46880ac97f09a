-- What runtime/migrations/mysql/0014_flow_keys.sql does to leasegen_tasks,
-- as plain DDL for sqlc (see mysql_0004.sql); flow_status is a virtual
-- column there. Never applied to a database.
ALTER TABLE leasegen_tasks
  ADD COLUMN flow_key VARCHAR(255) NULL,
  ADD COLUMN flow_status VARCHAR(16) NULL;
