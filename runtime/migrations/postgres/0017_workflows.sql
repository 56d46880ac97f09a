-- leasegen schema for PostgreSQL, version 17: workflows (see the MySQL
-- migration 0017_workflows.sql). The waiting steps have a partial index.
CREATE TABLE IF NOT EXISTS leasegen_workflows (
  id         BIGSERIAL   PRIMARY KEY,
  name       TEXT        NOT NULL,
  created_at TIMESTAMPTZ NOT NULL
);
CREATE TABLE IF NOT EXISTS leasegen_workflow_steps (
  task_id     BIGINT  PRIMARY KEY,
  workflow_id BIGINT  NOT NULL,
  step        TEXT    NOT NULL,
  waiting     BOOLEAN NOT NULL,
  version     BIGINT  NOT NULL DEFAULT 0,
  UNIQUE (workflow_id, step)
);
CREATE INDEX IF NOT EXISTS leasegen_workflow_steps_waiting ON leasegen_workflow_steps (task_id) WHERE waiting;
CREATE TABLE IF NOT EXISTS leasegen_task_deps (
  parent_id      BIGINT  NOT NULL,
  child_id       BIGINT  NOT NULL,
  run_on_failure BOOLEAN NOT NULL,
  PRIMARY KEY (parent_id, child_id)
);
CREATE INDEX IF NOT EXISTS leasegen_task_deps_child ON leasegen_task_deps (child_id, parent_id);
