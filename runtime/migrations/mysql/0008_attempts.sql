-- leasegen schema, version 8: attempt history.
-- leasegen_attempts keeps the attempts of a task that did not end it: a
-- failure retried, a snooze, a release at shutdown, a lease that expired
-- and was requeued. The attempt that ends a task (or runs now) is read from
-- the task's own row, so a task that succeeds at once costs no row here.
-- A worker keeps the latest Config.AttemptHistory of a task's rows;
-- retention deletes them with their task. error is bounded by the worker.
CREATE TABLE IF NOT EXISTS leasegen_attempts (
  task_id     BIGINT       NOT NULL,
  attempt     INT          NOT NULL,
  worker      VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  started_at  DATETIME(3)  NOT NULL,
  finished_at DATETIME(3)  NOT NULL,
  outcome     VARCHAR(16)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  error       TEXT         NULL,
  duration_us BIGINT       NOT NULL,
  PRIMARY KEY (task_id, attempt)
) ENGINE = InnoDB;
