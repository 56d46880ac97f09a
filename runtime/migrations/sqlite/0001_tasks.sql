-- leasegen schema for SQLite, version 1: the task table. Instants are
-- INTEGER milliseconds since the Unix epoch, from the database's clock
-- (unixepoch('subsec')). Writers serialize on SQLite's write lock, so no
-- limit rows are needed. AUTOINCREMENT keeps ids from ever being reused.

CREATE TABLE IF NOT EXISTS leasegen_tasks (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  task_type       TEXT    NOT NULL,
  status          TEXT    NOT NULL,
  payload         BLOB    NOT NULL,
  priority        INTEGER NOT NULL DEFAULT 0,
  available_at    INTEGER NOT NULL,
  attempt         INTEGER NOT NULL DEFAULT 0,
  free_attempts   INTEGER NOT NULL DEFAULT 0,
  max_attempts    INTEGER NOT NULL,
  lease_owner     TEXT,
  lease_until     INTEGER,
  owner_id        TEXT    NOT NULL DEFAULT '',
  idempotency_key TEXT,
  last_error      TEXT,
  result          TEXT,
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL,
  started_at      INTEGER,
  finished_at     INTEGER
);

CREATE UNIQUE INDEX IF NOT EXISTS leasegen_tasks_key ON leasegen_tasks (task_type, idempotency_key);
CREATE INDEX IF NOT EXISTS leasegen_tasks_claim ON leasegen_tasks (status, priority DESC, available_at, id);
CREATE INDEX IF NOT EXISTS leasegen_tasks_recover ON leasegen_tasks (status, lease_until);
CREATE INDEX IF NOT EXISTS leasegen_tasks_owner ON leasegen_tasks (owner_id, status, created_at);
CREATE INDEX IF NOT EXISTS leasegen_tasks_stats ON leasegen_tasks (status, task_type);
CREATE INDEX IF NOT EXISTS leasegen_tasks_finished ON leasegen_tasks (finished_at);
