-- leasegen schema for PostgreSQL, version 11: the task that did the work
-- of an idempotency key by the key alone, and a task's recorded key by its
-- id (see the MySQL migration of the same number). Each statement may run
-- again after a crash.
CREATE INDEX IF NOT EXISTS leasegen_idempotency_keys_by_key ON leasegen_idempotency_keys (idem_key);
CREATE INDEX IF NOT EXISTS leasegen_idempotency_keys_by_task ON leasegen_idempotency_keys (task_id);
