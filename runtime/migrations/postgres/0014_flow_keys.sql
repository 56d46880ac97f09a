-- leasegen schema for PostgreSQL, version 14: concurrency keys (see the
-- MySQL migration of the same number). The partial index holds keyed
-- tasks only, so unkeyed tasks never touch it.
ALTER TABLE leasegen_tasks ADD COLUMN IF NOT EXISTS flow_key TEXT NULL;
CREATE INDEX IF NOT EXISTS leasegen_tasks_flow ON leasegen_tasks (flow_key, task_type, status, id)
  WHERE flow_key IS NOT NULL;
CREATE TABLE IF NOT EXISTS leasegen_flow_keys (
  task_type TEXT    NOT NULL,
  flow_key  TEXT    NOT NULL,
  key_limit INTEGER NOT NULL,
  blocking  BOOLEAN NOT NULL DEFAULT FALSE,
  version   BIGINT  NOT NULL DEFAULT 0,
  PRIMARY KEY (task_type, flow_key)
);
