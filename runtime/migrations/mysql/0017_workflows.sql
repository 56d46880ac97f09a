-- leasegen schema, version 17: workflows (Client.EnqueueWorkflow). A
-- workflow is tasks, its steps, stored in one transaction; a step with
-- parents is inserted WAITING (flow_key NULL: no concurrency key holds
-- it) and becomes QUEUED, or CANCELLED, once its parents have ended, by a
-- settle transaction that locks its row in leasegen_workflow_steps.
-- - leasegen_workflows has one row per workflow: its name and when it was
--   enqueued.
-- - leasegen_workflow_steps has one row per step: its workflow, its name
--   in it, whether it still waits for its parents to end (waiting),
--   which the settle transaction that decides it clears, and the version
--   a settle transaction writes to lock the row (Galera certifies written
--   rows only, as for leasegen_flow_keys).
-- - leasegen_task_deps has one row per edge, parent to child, with what a
--   parent that ends without success does to the child: cancels it, or
--   (run_on_failure) lets it run.
CREATE TABLE IF NOT EXISTS leasegen_workflows (
  id         BIGINT       NOT NULL AUTO_INCREMENT,
  name       VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  created_at DATETIME(3)  NOT NULL,
  PRIMARY KEY (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS leasegen_workflow_steps (
  task_id     BIGINT       NOT NULL,
  workflow_id BIGINT       NOT NULL,
  step        VARCHAR(128) NOT NULL,
  waiting     BOOLEAN      NOT NULL,
  version     BIGINT       NOT NULL DEFAULT 0,
  PRIMARY KEY (task_id),
  UNIQUE KEY leasegen_workflow_steps_name (workflow_id, step),
  KEY leasegen_workflow_steps_waiting (waiting, task_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE TABLE IF NOT EXISTS leasegen_task_deps (
  parent_id      BIGINT  NOT NULL,
  child_id       BIGINT  NOT NULL,
  run_on_failure BOOLEAN NOT NULL,
  PRIMARY KEY (parent_id, child_id),
  KEY leasegen_task_deps_child (child_id, parent_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
