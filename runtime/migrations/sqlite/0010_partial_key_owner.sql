-- leasegen schema for SQLite, version 10: the key and owner indexes hold
-- only the tasks that have a key or an owner (see the PostgreSQL migration
-- of the same number): two index insertions fewer per enqueue. Inserts
-- name the predicate in ON CONFLICT, and ListByOwner says owner_id <> ''
-- so that it can use its index. SQLite runs the step in one transaction.
DROP INDEX IF EXISTS leasegen_tasks_key;
CREATE UNIQUE INDEX leasegen_tasks_key ON leasegen_tasks (task_type, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
DROP INDEX IF EXISTS leasegen_tasks_by_owner;
CREATE INDEX leasegen_tasks_by_owner ON leasegen_tasks (owner_id, created_at) WHERE owner_id <> '';
