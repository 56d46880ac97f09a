-- leasegen schema for SQLite, version 14: concurrency keys (see the MySQL
-- migration of the same number). SQLite runs the step in one transaction;
-- the partial index holds keyed tasks only.
ALTER TABLE leasegen_tasks ADD COLUMN flow_key TEXT;
CREATE INDEX IF NOT EXISTS leasegen_tasks_flow ON leasegen_tasks (flow_key, task_type, status, id)
  WHERE flow_key IS NOT NULL;
CREATE TABLE IF NOT EXISTS leasegen_flow_keys (
  task_type TEXT    NOT NULL,
  flow_key  TEXT    NOT NULL,
  key_limit INTEGER NOT NULL,
  blocking  INTEGER NOT NULL DEFAULT 0,
  version   INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (task_type, flow_key)
);
