-- What runtime/migrations/mysql/0015_rates.sql does to leasegen_tasks and
-- leasegen_flow_keys, as plain DDL for sqlc (see mysql_0004.sql); flow_state
-- is a stored generated column there. Never applied to a database.
ALTER TABLE leasegen_tasks ADD COLUMN flow_slot INT NULL;
ALTER TABLE leasegen_tasks DROP COLUMN flow_status;
ALTER TABLE leasegen_tasks ADD COLUMN flow_state VARCHAR(8) NULL;
ALTER TABLE leasegen_flow_keys
  ADD COLUMN rate_limit INT NOT NULL DEFAULT 0,
  ADD COLUMN rate_window_us BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN queue_limit INT NOT NULL DEFAULT 0;
