-- leasegen schema for SQLite, version 15: rate limits and fairness keys
-- (see the MySQL migration of the same number). free_at is in Unix milliseconds, as every
-- instant leasegen stores in SQLite.
ALTER TABLE leasegen_tasks ADD COLUMN flow_slot INTEGER;
ALTER TABLE leasegen_flow_keys ADD COLUMN rate_limit INTEGER NOT NULL DEFAULT 0;
ALTER TABLE leasegen_flow_keys ADD COLUMN rate_window_us INTEGER NOT NULL DEFAULT 0;
ALTER TABLE leasegen_flow_keys ADD COLUMN queue_limit INTEGER NOT NULL DEFAULT 0;
CREATE TABLE IF NOT EXISTS leasegen_flow_slots (
  task_type TEXT    NOT NULL,
  flow_key  TEXT    NOT NULL,
  slot      INTEGER NOT NULL,
  window_us INTEGER NOT NULL,
  free_at   INTEGER,
  PRIMARY KEY (task_type, flow_key, slot)
);
CREATE INDEX IF NOT EXISTS leasegen_flow_slots_free ON leasegen_flow_slots (free_at);
