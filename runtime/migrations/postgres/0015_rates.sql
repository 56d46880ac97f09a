-- leasegen schema for PostgreSQL, version 15: rate limits and fairness keys
-- (see the MySQL migration of the same number).
ALTER TABLE leasegen_tasks ADD COLUMN IF NOT EXISTS flow_slot INTEGER NULL;
ALTER TABLE leasegen_flow_keys ADD COLUMN IF NOT EXISTS rate_limit INTEGER NOT NULL DEFAULT 0;
ALTER TABLE leasegen_flow_keys ADD COLUMN IF NOT EXISTS rate_window_us BIGINT NOT NULL DEFAULT 0;
ALTER TABLE leasegen_flow_keys ADD COLUMN IF NOT EXISTS queue_limit INTEGER NOT NULL DEFAULT 0;
CREATE TABLE IF NOT EXISTS leasegen_flow_slots (
  task_type TEXT        NOT NULL,
  flow_key  TEXT        NOT NULL,
  slot      INTEGER     NOT NULL,
  window_us BIGINT      NOT NULL,
  free_at   TIMESTAMPTZ NULL,
  PRIMARY KEY (task_type, flow_key, slot)
);
CREATE INDEX IF NOT EXISTS leasegen_flow_slots_free ON leasegen_flow_slots (free_at);

-- leasegen_claim (0001) also moves on the rate slots of the keyed tasks it
-- claims (those with a flow_slot), in the same statement: a start and its
-- slot's next free instant commit together.
CREATE OR REPLACE FUNCTION leasegen_claim(owner TEXT, types TEXT[], lim INTEGER,
    default_lease_us BIGINT, lease_types TEXT[], lease_us BIGINT[])
RETURNS SETOF leasegen_tasks
LANGUAGE plpgsql
SET enable_bitmapscan = off
SET enable_seqscan = off
AS $$
BEGIN
  RETURN QUERY
  WITH picked AS (
    SELECT t.id FROM leasegen_tasks t
    WHERE t.status = 'QUEUED'
      AND t.task_type = ANY(types)
      AND t.available_at <= now()
      AND t.task_type NOT IN (SELECT p.task_type FROM leasegen_paused_types p)
    ORDER BY t.priority DESC, t.available_at, t.id
    LIMIT lim
    FOR UPDATE OF t SKIP LOCKED
  ), claimed AS (
    UPDATE leasegen_tasks u SET
      status = 'RUNNING',
      attempt = u.attempt + 1,
      lease_owner = owner,
      lease_until = now() + COALESCE(lease_us[array_position(lease_types, u.task_type)], default_lease_us) * interval '1 microsecond',
      started_at = now(),
      updated_at = now()
    FROM picked
    WHERE u.id = picked.id
    RETURNING u.*
  ), rated AS (
    UPDATE leasegen_flow_slots s SET free_at = now() + s.window_us * interval '1 microsecond'
    FROM claimed c
    WHERE c.flow_slot IS NOT NULL
      AND s.task_type = c.task_type AND s.flow_key = c.flow_key AND s.slot = c.flow_slot
  )
  SELECT * FROM claimed;
END
$$;
