-- leasegen schema, version 11: an operator finds the task that did the
-- work of an idempotency key by the key alone (leasectl list -key, the
-- UI's key filter), and a task's recorded key by its id (leasectl show).
-- Both indexes are on leasegen_idempotency_keys, written only when an
-- idempotent task's work commits: enqueues, claims and completions of
-- every other task pay nothing. Each index is created only while it is
-- missing, so the step can run again after a crash.
SET @leasegen_v11 = IF(EXISTS (SELECT 1 FROM information_schema.statistics
    WHERE table_schema = DATABASE() AND table_name = 'leasegen_idempotency_keys' AND index_name = 'leasegen_idempotency_keys_by_key'),
  'DO 0',
  'CREATE INDEX leasegen_idempotency_keys_by_key ON leasegen_idempotency_keys (idem_key)');
PREPARE leasegen_v11 FROM @leasegen_v11;
EXECUTE leasegen_v11;
DEALLOCATE PREPARE leasegen_v11;

SET @leasegen_v11 = IF(EXISTS (SELECT 1 FROM information_schema.statistics
    WHERE table_schema = DATABASE() AND table_name = 'leasegen_idempotency_keys' AND index_name = 'leasegen_idempotency_keys_by_task'),
  'DO 0',
  'CREATE INDEX leasegen_idempotency_keys_by_task ON leasegen_idempotency_keys (task_id)');
PREPARE leasegen_v11 FROM @leasegen_v11;
EXECUTE leasegen_v11;
DEALLOCATE PREPARE leasegen_v11;
