-- leasegen schema for PostgreSQL, version 2: the idempotency keys whose
-- work committed (RunIdempotent), kept when their tasks are purged.
CREATE TABLE IF NOT EXISTS leasegen_idempotency_keys (
  task_type  TEXT        NOT NULL,
  idem_key   TEXT        NOT NULL,
  task_id    BIGINT      NOT NULL,
  created_at TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (task_type, idem_key)
);
