-- leasegen schema, version 14: concurrency keys (runtime.WithConcurrencyKey
-- and WithSequentialKey). A keyed task carries its key in flow_key; it
-- waits in status WAITING until its key has a free slot, and a slot is
-- held by each task of the key that is QUEUED, RUNNING or
-- CANCEL_REQUESTED (and FAILED, for a sequence that blocks on failure).
-- - flow_status is status for a keyed task and NULL for every other, so
--   leasegen_tasks_flow finds a key's holders and its waiting line, in
--   enqueue order, while a status change of an unkeyed task leaves the
--   index alone.
-- - leasegen_flow_keys has one row per key with tasks in flight: its limit,
--   whether a failure blocks it, and the row every change of the key's
--   slots locks (by writing it, so Galera certifies it as for
--   leasegen_limits).
-- - status's ENUM gains WAITING, at its end, which changes no stored row.
-- Each statement runs only while its work is left, so the step can run
-- again after a crash.
SET @leasegen_v14_status = IF(EXISTS (SELECT 1 FROM information_schema.columns
    WHERE table_schema = DATABASE() AND table_name = 'leasegen_tasks' AND column_name = 'status'
      AND column_type LIKE '%WAITING%'),
  'DO 0',
  'ALTER TABLE leasegen_tasks MODIFY status ENUM(''QUEUED'', ''RUNNING'', ''CANCEL_REQUESTED'', ''SUCCESS'', ''FAILED'', ''CANCELLED'', ''WAITING'')
     CHARACTER SET ascii COLLATE ascii_bin NOT NULL');
PREPARE leasegen_v14_status FROM @leasegen_v14_status;
EXECUTE leasegen_v14_status;
DEALLOCATE PREPARE leasegen_v14_status;

SET @leasegen_v14 = IF(EXISTS (SELECT 1 FROM information_schema.columns
    WHERE table_schema = DATABASE() AND table_name = 'leasegen_tasks' AND column_name = 'flow_key'),
  'DO 0',
  'ALTER TABLE leasegen_tasks
     ADD COLUMN flow_key VARCHAR(255) NULL,
     ADD COLUMN flow_status VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin
       AS (IF(flow_key IS NULL, NULL, status)) VIRTUAL,
     ADD INDEX leasegen_tasks_flow (flow_key, task_type, flow_status, id)');
PREPARE leasegen_v14 FROM @leasegen_v14;
EXECUTE leasegen_v14;
DEALLOCATE PREPARE leasegen_v14;

CREATE TABLE IF NOT EXISTS leasegen_flow_keys (
  task_type VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  flow_key  VARCHAR(255) NOT NULL,
  key_limit INT          NOT NULL,
  blocking  BOOLEAN      NOT NULL DEFAULT FALSE,
  version   BIGINT       NOT NULL DEFAULT 0,
  PRIMARY KEY (task_type, flow_key)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
