-- leasegen schema for SQLite, version 9: finished tasks per minute (see the
-- MySQL migration of the same number). minute_at is Unix milliseconds.
CREATE TABLE IF NOT EXISTS leasegen_throughput (
  task_type TEXT    NOT NULL,
  minute_at INTEGER NOT NULL,
  succeeded INTEGER NOT NULL,
  failed    INTEGER NOT NULL,
  cancelled INTEGER NOT NULL,
  PRIMARY KEY (task_type, minute_at)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS leasegen_throughput_age ON leasegen_throughput (minute_at);
-- The finished tasks' index leads with status and covers task_type, so
-- that a status's first tasks (bounded counts) and a minute's finished
-- tasks are read from the index alone.
DROP INDEX IF EXISTS leasegen_tasks_finished;
CREATE INDEX leasegen_tasks_finished ON leasegen_tasks (status, due_at, task_type)
  WHERE status IN ('SUCCESS', 'FAILED', 'CANCELLED');
