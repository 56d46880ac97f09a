-- What runtime/migrations/mysql/0004_due_index.sql does, as plain DDL for
-- sqlc: the migration hides its statements in PREPARE so that it can run
-- again after a crash, and sqlc reads no dynamic SQL. The runtime's tests
-- run every query against the migrated table, so the two cannot drift
-- apart unnoticed. Never applied to a database.
ALTER TABLE leasegen_tasks
  ADD COLUMN due_priority INT NOT NULL DEFAULT 0,
  ADD COLUMN due_at DATETIME(3) NOT NULL,
  MODIFY lease_owner CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL DEFAULT '',
  MODIFY started_at DATETIME(3) NOT NULL DEFAULT '1970-01-01 00:00:00',
  DROP COLUMN lease_until,
  DROP COLUMN finished_at;
