-- leasegen schema, version 15: rate limits (runtime.WithRate per task type,
-- runtime.WithKeyRate per concurrency key) and fairness keys. A rate of n starts per window
-- is held by n slots: each start takes a slot, and a slot's next start
-- comes a window after its last one at the earliest, so no window ever
-- holds more than n starts.
-- - leasegen_flow_slots has the slots: a task type's under flow_key '',
--   a key's under the key; free_at is when the slot may start a task
--   again (NULL: never used), window_us the rate's window.
-- - leasegen_tasks.flow_slot is the slot a keyed task got with its key's
--   release; the claim that starts the task moves that slot's free_at a
--   window ahead.
-- - leasegen_flow_keys gains the key's rate (rate_limit starts per
--   rate_window_us; 0 for none) and, for a fairness key
--   (runtime.WithFairnessKey), its share: queue_limit, the most of its
--   tasks queued at once (0 for none).
-- - flow_slot is -1 for a task a fairness key's release queued: its start
--   makes the worker release the key again.
-- - flow_state replaces flow_status (version 14) in leasegen_tasks_flow:
--   HOLDING for every status that holds a key's slot (QUEUED, RUNNING,
--   CANCEL_REQUESTED, FAILED), WAITING, or DONE. A task that moves between
--   holding statuses keeps its index entry, so a release's locking read of
--   a key's holders, which waits for a task being changed and then reads
--   the entry again, always finds it. With flow_status a task going from
--   RUNNING back to QUEUED got a new entry before the old one in index
--   order: a reader past that point, waiting on the old entry, skipped
--   both, and counted one holder too few (MySQL 9.7 ran three tasks of a
--   key with a limit of two under kill -9). The column is STORED (version
--   16 says why; a table this step made before has it VIRTUAL until then).
-- Each statement runs only while its work is left, so the step can run
-- again after a crash.
SET @leasegen_v15 = IF(EXISTS (SELECT 1 FROM information_schema.columns
    WHERE table_schema = DATABASE() AND table_name = 'leasegen_tasks' AND column_name = 'flow_slot'),
  'DO 0',
  'ALTER TABLE leasegen_tasks ADD COLUMN flow_slot INT NULL');
PREPARE leasegen_v15 FROM @leasegen_v15;
EXECUTE leasegen_v15;
DEALLOCATE PREPARE leasegen_v15;

SET @leasegen_v15_keys = IF(EXISTS (SELECT 1 FROM information_schema.columns
    WHERE table_schema = DATABASE() AND table_name = 'leasegen_flow_keys' AND column_name = 'rate_limit'),
  'DO 0',
  'ALTER TABLE leasegen_flow_keys
     ADD COLUMN rate_limit INT NOT NULL DEFAULT 0,
     ADD COLUMN rate_window_us BIGINT NOT NULL DEFAULT 0,
     ADD COLUMN queue_limit INT NOT NULL DEFAULT 0');
PREPARE leasegen_v15_keys FROM @leasegen_v15_keys;
EXECUTE leasegen_v15_keys;
DEALLOCATE PREPARE leasegen_v15_keys;

SET @leasegen_v15_state = IF(EXISTS (SELECT 1 FROM information_schema.columns
    WHERE table_schema = DATABASE() AND table_name = 'leasegen_tasks' AND column_name = 'flow_state'),
  'DO 0',
  'ALTER TABLE leasegen_tasks
     DROP INDEX leasegen_tasks_flow,
     DROP COLUMN flow_status,
     ADD COLUMN flow_state VARCHAR(8) CHARACTER SET ascii COLLATE ascii_bin
       AS (CASE WHEN flow_key IS NULL THEN NULL
                WHEN status = ''WAITING'' THEN ''WAITING''
                WHEN status IN (''QUEUED'', ''RUNNING'', ''CANCEL_REQUESTED'', ''FAILED'') THEN ''HOLDING''
                ELSE ''DONE'' END) STORED,
     ADD INDEX leasegen_tasks_flow (flow_key, task_type, flow_state, id)');
PREPARE leasegen_v15_state FROM @leasegen_v15_state;
EXECUTE leasegen_v15_state;
DEALLOCATE PREPARE leasegen_v15_state;

CREATE TABLE IF NOT EXISTS leasegen_flow_slots (
  task_type VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  flow_key  VARCHAR(255) NOT NULL,
  slot      INT          NOT NULL,
  window_us BIGINT       NOT NULL,
  free_at   DATETIME(3)  NULL,
  PRIMARY KEY (task_type, flow_key, slot),
  INDEX leasegen_flow_slots_free (free_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
