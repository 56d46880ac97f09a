-- leasegen schema for PostgreSQL, version 9: finished tasks per minute
-- (see the MySQL migration of the same number).
CREATE TABLE IF NOT EXISTS leasegen_throughput (
  task_type TEXT        NOT NULL,
  minute_at TIMESTAMPTZ NOT NULL,
  succeeded BIGINT      NOT NULL,
  failed    BIGINT      NOT NULL,
  cancelled BIGINT      NOT NULL,
  PRIMARY KEY (task_type, minute_at)
);
CREATE INDEX IF NOT EXISTS leasegen_throughput_age ON leasegen_throughput (minute_at);
-- The finished tasks' index leads with status and covers task_type, so
-- that a status's first tasks (bounded counts) and a minute's finished
-- tasks are read from the index.
DROP INDEX IF EXISTS leasegen_tasks_finished;
CREATE INDEX leasegen_tasks_finished ON leasegen_tasks (status, finished_at) INCLUDE (task_type)
  WHERE status IN ('SUCCESS', 'FAILED', 'CANCELLED');
