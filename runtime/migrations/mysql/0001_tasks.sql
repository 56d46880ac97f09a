-- leasegen schema, version 1: the task table and the limit lock rows.
-- Every instant is UTC, written and compared with NOW(3) on the
-- database's clock in UTC sessions (the runtime refuses others), so worker
-- clocks never matter.

CREATE TABLE IF NOT EXISTS leasegen_tasks (
  id              BIGINT       NOT NULL AUTO_INCREMENT,
  task_type       VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  status          VARCHAR(16)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  payload         MEDIUMBLOB   NOT NULL,
  priority        INT          NOT NULL DEFAULT 0,
  available_at    DATETIME(3)  NOT NULL,
  attempt         INT          NOT NULL DEFAULT 0,
  free_attempts   INT          NOT NULL DEFAULT 0,
  max_attempts    INT          NOT NULL,
  lease_owner     VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NULL,
  lease_until     DATETIME(3)  NULL,
  owner_id        VARCHAR(255) NOT NULL DEFAULT '',
  idempotency_key VARCHAR(255) NULL,
  last_error      TEXT         NULL,
  result          TEXT         NULL,
  created_at      DATETIME(3)  NOT NULL,
  updated_at      DATETIME(3)  NOT NULL,
  started_at      DATETIME(3)  NULL,
  finished_at     DATETIME(3)  NULL,
  PRIMARY KEY (id),
  UNIQUE KEY leasegen_tasks_key (task_type, idempotency_key),
  KEY leasegen_tasks_claim (status, priority DESC, available_at, id),
  KEY leasegen_tasks_recover (status, lease_until),
  KEY leasegen_tasks_owner (owner_id, status, created_at),
  KEY leasegen_tasks_stats (status, task_type),
  KEY leasegen_tasks_finished (finished_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- One row per concurrency-limit scope ('*' for the global limit, else a task
-- type). A claim that must respect a limit locks the scope's row first, so
-- claimers of a limited scope serialize and each one counts what the previous
-- one committed.
CREATE TABLE IF NOT EXISTS leasegen_limits (
  scope VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  PRIMARY KEY (scope)
) ENGINE = InnoDB;
