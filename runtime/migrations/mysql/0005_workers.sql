-- leasegen schema, version 5: a row per live worker.
-- Worker.Start inserts its row, refusing a WorkerID that a live worker
-- holds and limits that differ from a live worker's; the recovery loop
-- renews alive_until; Stop deletes the row; a row past alive_until is a
-- dead worker's and is deleted by the next Start. task_limits is a JSON
-- object of the worker's task types, each with its concurrency limit (0
-- for none). The empty scope in leasegen_limits is the row Start locks so
-- that two starting workers check each other.

CREATE TABLE IF NOT EXISTS leasegen_workers (
  worker_id       VARCHAR(64)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  host            VARCHAR(255) NOT NULL,
  pid             INT          NOT NULL,
  started_at      DATETIME(3)  NOT NULL,
  alive_until     DATETIME(3)  NOT NULL,
  max_concurrency INT          NOT NULL,
  global_limit    INT          NOT NULL,
  task_limits     TEXT         NOT NULL,
  PRIMARY KEY (worker_id)
) ENGINE = InnoDB;

INSERT IGNORE INTO leasegen_limits (scope) VALUES ('');
