-- What runtime/migrations/mysql/0006_metadata_paused.sql does to
-- leasegen_tasks, as plain DDL for sqlc (see mysql_0004.sql). Never applied
-- to a database.
ALTER TABLE leasegen_tasks ADD COLUMN metadata TEXT NULL;
