-- leasegen schema for PostgreSQL, version 8: attempt history (see the
-- MySQL migration of the same number).
CREATE TABLE IF NOT EXISTS leasegen_attempts (
  task_id     BIGINT      NOT NULL,
  attempt     INTEGER     NOT NULL,
  worker      TEXT        NOT NULL,
  started_at  TIMESTAMPTZ NOT NULL,
  finished_at TIMESTAMPTZ NOT NULL,
  outcome     TEXT        NOT NULL,
  error       TEXT        NULL,
  duration_us BIGINT      NOT NULL,
  PRIMARY KEY (task_id, attempt)
);
