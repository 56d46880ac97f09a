-- leasegen schema, version 16: leasegen_tasks.flow_state (version 15) is
-- STORED, not VIRTUAL. InnoDB's purge computes an indexed virtual column
-- for every undo record of the table it removes, and MariaDB 10.11's purge
-- opens a table handle for that (open_purge_table) whose memory it kept:
-- under the tests' load a MariaDB server grew by gigabytes, a Galera node
-- to 18 GiB until the kernel killed it. A stored column is read from the
-- row, and a task moving between holding statuses still keeps its index
-- entry (see version 15). Version 15 creates the column STORED since this
-- version; this step converts a table version 15 made before, rebuilding
-- it (a copy of leasegen_tasks: about as long as an OPTIMIZE TABLE).
-- It runs only while the column is virtual, so it can run again after a
-- crash.
SET @leasegen_v16 = IF(EXISTS (SELECT 1 FROM information_schema.columns
    WHERE table_schema = DATABASE() AND table_name = 'leasegen_tasks' AND column_name = 'flow_state'
      AND extra LIKE 'VIRTUAL%'),
  'ALTER TABLE leasegen_tasks
     DROP INDEX leasegen_tasks_flow,
     DROP COLUMN flow_state,
     ADD COLUMN flow_state VARCHAR(8) CHARACTER SET ascii COLLATE ascii_bin
       AS (CASE WHEN flow_key IS NULL THEN NULL
                WHEN status = ''WAITING'' THEN ''WAITING''
                WHEN status IN (''QUEUED'', ''RUNNING'', ''CANCEL_REQUESTED'', ''FAILED'') THEN ''HOLDING''
                ELSE ''DONE'' END) STORED,
     ADD INDEX leasegen_tasks_flow (flow_key, task_type, flow_state, id)',
  'DO 0');
PREPARE leasegen_v16 FROM @leasegen_v16;
EXECUTE leasegen_v16;
DEALLOCATE PREPARE leasegen_v16;
