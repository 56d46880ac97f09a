-- leasegen schema for PostgreSQL, version 5: a row per live worker (see
-- the MySQL migration of the same number). Start locks the empty scope's
-- row in leasegen_limits, so starting workers check each other.
CREATE TABLE IF NOT EXISTS leasegen_workers (
  worker_id       TEXT        NOT NULL PRIMARY KEY,
  host            TEXT        NOT NULL,
  pid             INTEGER     NOT NULL,
  started_at      TIMESTAMPTZ NOT NULL,
  alive_until     TIMESTAMPTZ NOT NULL,
  max_concurrency INTEGER     NOT NULL,
  global_limit    INTEGER     NOT NULL,
  task_limits     TEXT        NOT NULL
);
