-- leasegen schema, version 12: every task counted by type and status, in
-- the background. Counting leasegen_tasks by type and status reads every
-- row: on a table of a million tasks too slow for each page an operator
-- opens, which count at most 10,001 tasks of a status live. One worker at
-- a time counts them all, about every minute, less often when counting
-- takes long (it waits 100 times as long as the count took), and
-- leasegen_counts keeps the last count for the UI and leasectl, which
-- show its age. leasegen_count_turn's one row says when the next count is
-- due: the worker whose UPDATE moves next_at counts.
CREATE TABLE IF NOT EXISTS leasegen_counts (
  task_type VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  status    VARCHAR(16)  CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  tasks     BIGINT       NOT NULL,
  PRIMARY KEY (task_type, status)
) ENGINE = InnoDB;
CREATE TABLE IF NOT EXISTS leasegen_count_turn (
  id         TINYINT     NOT NULL PRIMARY KEY,
  counted_at DATETIME(3) NULL,
  took_us    BIGINT      NOT NULL,
  next_at    DATETIME(3) NOT NULL
) ENGINE = InnoDB;
INSERT IGNORE INTO leasegen_count_turn (id, counted_at, took_us, next_at) VALUES (1, NULL, 0, '1970-01-01 00:00:01');
