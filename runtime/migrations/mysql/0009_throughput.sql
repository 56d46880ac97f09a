-- leasegen schema, version 9: finished tasks per minute.
-- leasegen_throughput counts, for each whole minute, the tasks that
-- finished in it, by type and outcome. Workers count each minute once,
-- a few seconds after it ends, from leasegen_tasks_due (a finished task is
-- due when it finished), so a dashboard reads an hour of counts from 60
-- rows instead of counting an hour of tasks. The row of task type '' holds
-- a minute's total over all types; its presence marks the minute counted.
-- Rows older than a day are deleted.
CREATE TABLE IF NOT EXISTS leasegen_throughput (
  task_type VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  minute_at DATETIME     NOT NULL,
  succeeded BIGINT       NOT NULL,
  failed    BIGINT       NOT NULL,
  cancelled BIGINT       NOT NULL,
  PRIMARY KEY (task_type, minute_at),
  KEY leasegen_throughput_age (minute_at)
) ENGINE = InnoDB;
