-- leasegen schema for PostgreSQL, version 10: the key and owner indexes
-- hold only the tasks that have a key or an owner.
-- An update that changes status is never heap-only (status is in the
-- partial indexes' predicates), so it adds an entry to every index whose
-- predicate holds for the new row version. Tasks without an idempotency
-- key or an owner, most of them, now have no entry in these two indexes:
-- two index insertions fewer per enqueue, per claim and per completion.
-- Inserts name the predicate in ON CONFLICT, and ListByOwner says
-- owner_id <> '' so that it can use its index. Each statement may run
-- again after a crash.
CREATE UNIQUE INDEX IF NOT EXISTS leasegen_tasks_keyed ON leasegen_tasks (task_type, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
ALTER TABLE leasegen_tasks DROP CONSTRAINT IF EXISTS leasegen_tasks_key;
DROP INDEX IF EXISTS leasegen_tasks_by_owner;
CREATE INDEX leasegen_tasks_by_owner ON leasegen_tasks (owner_id, created_at) WHERE owner_id <> '';
