-- leasegen schema for SQLite, version 8: attempt history (see the MySQL
-- migration of the same number). Instants are Unix milliseconds.
CREATE TABLE IF NOT EXISTS leasegen_attempts (
  task_id     INTEGER NOT NULL,
  attempt     INTEGER NOT NULL,
  worker      TEXT    NOT NULL,
  started_at  INTEGER NOT NULL,
  finished_at INTEGER NOT NULL,
  outcome     TEXT    NOT NULL,
  error       TEXT,
  duration_us INTEGER NOT NULL,
  PRIMARY KEY (task_id, attempt)
) WITHOUT ROWID;
