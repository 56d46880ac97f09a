-- leasegen schema for SQLite, version 7: periodic tasks (see the MySQL
-- migration of the same number). Instants are Unix milliseconds, as in
-- every SQLite table. SQLite runs the step in one transaction.
CREATE TABLE IF NOT EXISTS leasegen_schedules (
  name             TEXT    NOT NULL PRIMARY KEY,
  task_type        TEXT    NOT NULL,
  spec             TEXT    NOT NULL,
  misfire          TEXT    NOT NULL,
  overlap          TEXT    NOT NULL,
  payload          BLOB    NOT NULL,
  priority         INTEGER NOT NULL,
  max_attempts     INTEGER NOT NULL,
  next_run         INTEGER NOT NULL,
  paused           INTEGER NOT NULL DEFAULT 0,
  registered_at    INTEGER NOT NULL,
  last_tick        INTEGER,
  last_enqueued_at INTEGER,
  last_task_id     INTEGER,
  ticks            INTEGER NOT NULL DEFAULT 0,
  missed           INTEGER NOT NULL DEFAULT 0
);
ALTER TABLE leasegen_workers ADD COLUMN schedules TEXT;
