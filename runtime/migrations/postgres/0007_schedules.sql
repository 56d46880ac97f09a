-- leasegen schema for PostgreSQL, version 7: periodic tasks (see the MySQL
-- migration of the same number).
CREATE TABLE IF NOT EXISTS leasegen_schedules (
  name             TEXT        NOT NULL PRIMARY KEY,
  task_type        TEXT        NOT NULL,
  spec             TEXT        NOT NULL,
  misfire          TEXT        NOT NULL,
  overlap          TEXT        NOT NULL,
  payload          BYTEA       NOT NULL,
  priority         INTEGER     NOT NULL,
  max_attempts     INTEGER     NOT NULL,
  next_run         TIMESTAMPTZ NOT NULL,
  paused           BOOLEAN     NOT NULL DEFAULT FALSE,
  registered_at    TIMESTAMPTZ NOT NULL,
  last_tick        TIMESTAMPTZ NULL,
  last_enqueued_at TIMESTAMPTZ NULL,
  last_task_id     BIGINT      NULL,
  ticks            BIGINT      NOT NULL DEFAULT 0,
  missed           BIGINT      NOT NULL DEFAULT 0
);
ALTER TABLE leasegen_workers ADD COLUMN IF NOT EXISTS schedules TEXT NULL;
