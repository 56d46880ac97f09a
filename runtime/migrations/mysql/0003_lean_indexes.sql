-- leasegen schema, version 3: fewer index entries move per task.
-- A claim and a completion each change a task's status, and every index
-- whose key holds a changed column moves its entry: that was most of the
-- server's work per task (9 entry moves; now 4). So:
-- - leasegen_tasks_queue replaces leasegen_tasks_claim: the same claim
--   order, with task_type after the key so that counting active tasks by
--   type reads the index alone (leasegen_tasks_stats goes);
-- - leasegen_tasks_by_owner replaces leasegen_tasks_owner without status,
--   which a status change no longer moves;
-- - a finished task keeps its lease end in lease_until (the instant it
--   finished), so leasegen_tasks_recover serves retention too and
--   leasegen_tasks_finished goes;
-- - status becomes an ENUM: one byte in the row and in every index entry
--   instead of a variable-length string (the same literals in SQL). This
--   rebuilds the table: on a large one, purge finished tasks first or run
--   it at a quiet time.
-- The ALTER is one atomic statement, run only while leasegen_tasks_queue
-- is missing, so the step can run again after a crash.
SET @leasegen_v3 = IF(EXISTS (SELECT 1 FROM information_schema.statistics
    WHERE table_schema = DATABASE() AND table_name = 'leasegen_tasks' AND index_name = 'leasegen_tasks_queue'),
  'DO 0',
  'ALTER TABLE leasegen_tasks MODIFY status ENUM(''QUEUED'', ''RUNNING'', ''CANCEL_REQUESTED'', ''SUCCESS'', ''FAILED'', ''CANCELLED'') CHARACTER SET ascii COLLATE ascii_bin NOT NULL, DROP INDEX leasegen_tasks_claim, DROP INDEX leasegen_tasks_owner, DROP INDEX leasegen_tasks_stats, DROP INDEX leasegen_tasks_finished, ADD INDEX leasegen_tasks_queue (status, priority DESC, available_at, id, task_type), ADD INDEX leasegen_tasks_by_owner (owner_id, created_at)');
PREPARE leasegen_v3 FROM @leasegen_v3;
EXECUTE leasegen_v3;
DEALLOCATE PREPARE leasegen_v3;

UPDATE leasegen_tasks SET lease_until = finished_at
WHERE status IN ('SUCCESS', 'FAILED', 'CANCELLED') AND lease_until IS NULL;
