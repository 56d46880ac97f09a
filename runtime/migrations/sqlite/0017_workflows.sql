-- leasegen schema for SQLite, version 17: workflows (see the MySQL
-- migration 0017_workflows.sql). Instants are Unix milliseconds; the
-- waiting steps have a partial index.
CREATE TABLE IF NOT EXISTS leasegen_workflows (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  name       TEXT    NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS leasegen_workflow_steps (
  task_id     INTEGER PRIMARY KEY,
  workflow_id INTEGER NOT NULL,
  step        TEXT    NOT NULL,
  waiting     INTEGER NOT NULL,
  version     INTEGER NOT NULL DEFAULT 0,
  UNIQUE (workflow_id, step)
);
CREATE INDEX IF NOT EXISTS leasegen_workflow_steps_waiting ON leasegen_workflow_steps (task_id) WHERE waiting;
CREATE TABLE IF NOT EXISTS leasegen_task_deps (
  parent_id      INTEGER NOT NULL,
  child_id       INTEGER NOT NULL,
  run_on_failure INTEGER NOT NULL,
  PRIMARY KEY (parent_id, child_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS leasegen_task_deps_child ON leasegen_task_deps (child_id, parent_id);
