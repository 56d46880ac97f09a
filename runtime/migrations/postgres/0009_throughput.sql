-- leasegen schema for PostgreSQL, version 9: finished tasks per minute
-- (see the MySQL migration of the same number).
CREATE TABLE IF NOT EXISTS leasegen_throughput (
  task_type TEXT        NOT NULL,
  minute_at TIMESTAMPTZ NOT NULL,
  succeeded BIGINT      NOT NULL,
  failed    BIGINT      NOT NULL,
  cancelled BIGINT      NOT NULL,
  PRIMARY KEY (task_type, minute_at)
);
CREATE INDEX IF NOT EXISTS leasegen_throughput_age ON leasegen_throughput (minute_at);
-- The finished tasks' index leads with status and covers task_type, so
-- that a status's first tasks (bounded counts) and a minute's finished
-- tasks are read from the index.
DROP INDEX IF EXISTS leasegen_tasks_finished;
CREATE INDEX leasegen_tasks_finished ON leasegen_tasks (status, finished_at) INCLUDE (task_type)
  WHERE status IN ('SUCCESS', 'FAILED', 'CANCELLED');
-- A status change cannot be a heap-only update (status is in the partial
-- indexes' predicates), so it adds an entry to every index whose
-- predicate holds for the new row version. Tasks without an idempotency
-- key or an owner, most of them, now have no entry in the key and owner
-- indexes: two index insertions fewer per claim and per completion.
CREATE UNIQUE INDEX IF NOT EXISTS leasegen_tasks_keyed ON leasegen_tasks (task_type, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
ALTER TABLE leasegen_tasks DROP CONSTRAINT IF EXISTS leasegen_tasks_key;
DROP INDEX IF EXISTS leasegen_tasks_by_owner;
CREATE INDEX leasegen_tasks_by_owner ON leasegen_tasks (owner_id, created_at) WHERE owner_id <> '';
