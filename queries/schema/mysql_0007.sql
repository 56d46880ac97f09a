-- What runtime/migrations/mysql/0007_schedules.sql does to
-- leasegen_workers, as plain DDL for sqlc (see mysql_0004.sql). Never
-- applied to a database.
ALTER TABLE leasegen_workers ADD COLUMN schedules TEXT NULL;
