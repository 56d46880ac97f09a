-- leasegen schema for PostgreSQL, version 12: every task counted by type
-- and status, in the background (see the MySQL migration of the same
-- number).
CREATE TABLE IF NOT EXISTS leasegen_counts (
  task_type TEXT   NOT NULL,
  status    TEXT   NOT NULL,
  tasks     BIGINT NOT NULL,
  PRIMARY KEY (task_type, status)
);
CREATE TABLE IF NOT EXISTS leasegen_count_turn (
  id         SMALLINT    NOT NULL PRIMARY KEY,
  counted_at TIMESTAMPTZ NULL,
  took_us    BIGINT      NOT NULL,
  next_at    TIMESTAMPTZ NOT NULL
);
INSERT INTO leasegen_count_turn (id, counted_at, took_us, next_at) VALUES (1, NULL, 0, 'epoch')
ON CONFLICT DO NOTHING;
