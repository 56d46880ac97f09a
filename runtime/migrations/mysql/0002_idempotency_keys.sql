-- leasegen schema, version 2: keys of idempotent tasks whose work committed.
-- The idempotency wrapper inserts the key in the handler's transaction, with
-- the fenced completion; a second task with the same key finds it and skips
-- its work.

CREATE TABLE IF NOT EXISTS leasegen_idempotency_keys (
  task_type  VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  idem_key   VARCHAR(255) NOT NULL,
  task_id    BIGINT       NOT NULL,
  created_at DATETIME(3)  NOT NULL,
  PRIMARY KEY (task_type, idem_key)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
