-- leasegen schema, version 6: task metadata and paused task types.
-- - metadata is a JSON object of strings that a task carries from its
--   enqueue (WithMetadata, enqueue middleware) to its handler, such as a
--   trace context; NULL when it has none. Written by the insert only, so
--   claims and completions still update rows in place. The column is
--   added in place on MariaDB 10.3+ and MySQL 8 (no table rebuild), and
--   only while it is missing, so the step can run again after a crash.
-- - leasegen_paused_types holds a row per paused task type: claims and
--   the idle poll skip its tasks until Resume deletes the row.
SET @leasegen_v6 = IF(EXISTS (SELECT 1 FROM information_schema.columns
    WHERE table_schema = DATABASE() AND table_name = 'leasegen_tasks' AND column_name = 'metadata'),
  'DO 0',
  'ALTER TABLE leasegen_tasks ADD COLUMN metadata TEXT NULL');
PREPARE leasegen_v6 FROM @leasegen_v6;
EXECUTE leasegen_v6;
DEALLOCATE PREPARE leasegen_v6;

CREATE TABLE IF NOT EXISTS leasegen_paused_types (
  task_type VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  paused_at DATETIME(3)  NOT NULL,
  PRIMARY KEY (task_type)
) ENGINE = InnoDB;
