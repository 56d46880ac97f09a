-- leasegen schema for SQLite, version 11: the task that did the work of an
-- idempotency key by the key alone, and a task's recorded key by its id
-- (see the MySQL migration of the same number). SQLite runs the step in
-- one transaction.
CREATE INDEX IF NOT EXISTS leasegen_idempotency_keys_by_key ON leasegen_idempotency_keys (idem_key);
CREATE INDEX IF NOT EXISTS leasegen_idempotency_keys_by_task ON leasegen_idempotency_keys (task_id);
