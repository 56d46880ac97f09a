-- leasegen schema, version 18: a workflow's end. status stays NULL while a
-- step of the workflow has not ended; recovery's pass writes SUCCESS
-- (every step succeeded), FAILED (a step failed) or CANCELLED (else), and
-- ended_at, the last step's end, once none is left, with a conditional
-- write that one process alone wins: it counts the end in its metrics. A
-- retried step clears them again. leasegen_workflows_open finds the
-- workflows not yet ended (ended_at NULL) in id order.
-- The step runs only while its work is left, so it can run again after a
-- crash.
SET @leasegen_v18 = IF(EXISTS (SELECT 1 FROM information_schema.columns
    WHERE table_schema = DATABASE() AND table_name = 'leasegen_workflows' AND column_name = 'ended_at'),
  'DO 0',
  'ALTER TABLE leasegen_workflows
     ADD COLUMN status VARCHAR(16) CHARACTER SET ascii COLLATE ascii_bin NULL,
     ADD COLUMN ended_at DATETIME(3) NULL,
     ADD INDEX leasegen_workflows_open (ended_at, id)');
PREPARE leasegen_v18 FROM @leasegen_v18;
EXECUTE leasegen_v18;
DEALLOCATE PREPARE leasegen_v18;
