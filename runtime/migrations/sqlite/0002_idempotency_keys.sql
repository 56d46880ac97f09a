-- leasegen schema for SQLite, version 2: keys of idempotent tasks whose work
-- committed (see the MySQL migration of the same number).

CREATE TABLE IF NOT EXISTS leasegen_idempotency_keys (
  task_type  TEXT    NOT NULL,
  idem_key   TEXT    NOT NULL,
  task_id    INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (task_type, idem_key)
);
