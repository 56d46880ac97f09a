-- leasegen schema, version 7: periodic tasks.
-- - leasegen_schedules holds a row per schedule, written when a worker
--   that registers it starts (WithSchedule). next_run is the next tick's
--   instant; the worker that fires a due schedule locks its row, enqueues
--   each tick with the idempotency key periodic:<name>:<tick>, and moves
--   next_run on, fenced on its old value, in one transaction. spec is the
--   canonical schedule ("cron 0 3 * * * Europe/Berlin", "every 15m0s");
--   the task columns are what each tick enqueues.
-- - leasegen_workers.schedules lists, as a JSON array, the schedules a
--   live worker registers, so that a schedule no worker registers any
--   more is reported. Added only while missing, so the step can run again.
CREATE TABLE IF NOT EXISTS leasegen_schedules (
  name             VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  task_type        VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  spec             VARCHAR(255) NOT NULL,
  misfire          VARCHAR(32)  NOT NULL,
  overlap          VARCHAR(16)  NOT NULL,
  payload          MEDIUMBLOB   NOT NULL,
  priority         INT          NOT NULL,
  max_attempts     INT          NOT NULL,
  next_run         DATETIME(6)  NOT NULL,
  paused           BOOLEAN      NOT NULL DEFAULT FALSE,
  registered_at    DATETIME(6)  NOT NULL,
  last_tick        DATETIME(6)  NULL,
  last_enqueued_at DATETIME(6)  NULL,
  last_task_id     BIGINT       NULL,
  ticks            BIGINT       NOT NULL DEFAULT 0,
  missed           BIGINT       NOT NULL DEFAULT 0,
  PRIMARY KEY (name)
) ENGINE = InnoDB;

SET @leasegen_v7 = IF(EXISTS (SELECT 1 FROM information_schema.columns
    WHERE table_schema = DATABASE() AND table_name = 'leasegen_workers' AND column_name = 'schedules'),
  'DO 0',
  'ALTER TABLE leasegen_workers ADD COLUMN schedules TEXT NULL');
PREPARE leasegen_v7 FROM @leasegen_v7;
EXECUTE leasegen_v7;
DEALLOCATE PREPARE leasegen_v7;
