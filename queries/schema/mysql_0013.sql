-- What runtime/migrations/mysql/0013_limit_writes.sql does to
-- leasegen_limits, as plain DDL for sqlc (see mysql_0004.sql). Never
-- applied to a database.
ALTER TABLE leasegen_limits ADD COLUMN version BIGINT NOT NULL DEFAULT 0;
