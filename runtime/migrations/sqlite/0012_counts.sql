-- leasegen schema for SQLite, version 12: every task counted by type and
-- status, in the background (see the MySQL migration of the same number).
-- counted_at and next_at are Unix milliseconds.
CREATE TABLE IF NOT EXISTS leasegen_counts (
  task_type TEXT    NOT NULL,
  status    TEXT    NOT NULL,
  tasks     INTEGER NOT NULL,
  PRIMARY KEY (task_type, status)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS leasegen_count_turn (
  id         INTEGER NOT NULL PRIMARY KEY,
  counted_at INTEGER,
  took_us    INTEGER NOT NULL,
  next_at    INTEGER NOT NULL
);
INSERT OR IGNORE INTO leasegen_count_turn (id, counted_at, took_us, next_at) VALUES (1, NULL, 0, 0);
