-- Queries on concurrency keys (see queries/mysql/flow_keys.sql). The
-- partial index leasegen_tasks_flow holds the keyed tasks. A count in
-- READ COMMITTED sees what committed before the key's row was locked; in
-- a caller's REPEATABLE READ transaction, locking a row another
-- transaction changed since the snapshot fails with a serialization error
-- instead.

-- name: FlowKeysUpsert :exec
-- Creates the keys' rows with their limits, or sets the stored rows',
-- in the arrays' order (the lock order); the rows stay locked until the
-- transaction ends.
INSERT INTO leasegen_flow_keys (task_type, flow_key, key_limit, blocking, rate_limit, rate_window_us, queue_limit, version)
SELECT k.task_type, k.flow_key, k.key_limit, k.blocking, k.rate_limit, k.rate_window, k.queue_limit, 1
FROM (
  SELECT unnest(@task_types::text[]) AS task_type, unnest(@flow_keys::text[]) AS flow_key,
         unnest(@key_limits::integer[]) AS key_limit, unnest(@blockings::boolean[]) AS blocking,
         unnest(@rate_limits::integer[]) AS rate_limit, unnest(@rate_windows::bigint[]) AS rate_window,
         unnest(@queue_limits::integer[]) AS queue_limit
) AS k
ON CONFLICT (task_type, flow_key) DO UPDATE
SET key_limit = EXCLUDED.key_limit, blocking = EXCLUDED.blocking, rate_limit = EXCLUDED.rate_limit,
  rate_window_us = EXCLUDED.rate_window_us, queue_limit = EXCLUDED.queue_limit, version = leasegen_flow_keys.version + 1;

-- name: FlowKeysLock :execrows
UPDATE leasegen_flow_keys SET version = version + 1
WHERE task_type = @task_type AND flow_key = ANY(@flow_keys::text[]);

-- name: FlowKeysGet :many
SELECT flow_key, key_limit, blocking, rate_limit, rate_window_us, queue_limit FROM leasegen_flow_keys
WHERE task_type = @task_type AND flow_key = ANY(@flow_keys::text[]);

-- name: FlowKeyDelete :exec
DELETE FROM leasegen_flow_keys WHERE task_type = $1 AND flow_key = $2;

-- name: FlowTasksWait :execrows
-- One statement for a whole enqueue: task ids[i] waits for key
-- flow_keys[i].
UPDATE leasegen_tasks t SET flow_key = w.flow_key, status = 'WAITING'
FROM (SELECT unnest(@ids::bigint[]) AS id, unnest(@flow_keys::text[]) AS flow_key) AS w
WHERE t.id = w.id AND t.flow_key IS NULL AND t.status = 'QUEUED' AND t.attempt = 0;

-- name: FlowKeysHolders :many
-- One count per status, each an equality on the three leading columns of
-- leasegen_tasks_flow: with the statuses as one IN list the planner
-- filtered the key's whole range, finished tasks and waiting ones
-- included (40 ms for a key with 100,000 tasks, against 3 ms).
SELECT k.flow_key::text AS flow_key,
  (SELECT COUNT(*) FROM leasegen_tasks t WHERE t.flow_key = k.flow_key AND t.task_type = @task_type AND t.status = 'QUEUED') AS queued,
  (SELECT COUNT(*) FROM leasegen_tasks t WHERE t.flow_key = k.flow_key AND t.task_type = @task_type AND t.status = 'RUNNING')
  + (SELECT COUNT(*) FROM leasegen_tasks t WHERE t.flow_key = k.flow_key AND t.task_type = @task_type AND t.status = 'CANCEL_REQUESTED') AS started,
  (SELECT COUNT(*) FROM leasegen_tasks t WHERE t.flow_key = k.flow_key AND t.task_type = @task_type AND t.status = 'FAILED') AS failed
FROM unnest(@flow_keys::text[]) AS k(flow_key);

-- name: FlowTasksQueue :execrows
UPDATE leasegen_tasks SET
  status = 'QUEUED',
  flow_slot = CASE WHEN @fair::boolean THEN -1 END,
  available_at = CASE WHEN @fair::boolean THEN GREATEST(available_at, now()) ELSE available_at END,
  updated_at = now()
WHERE id = ANY(@ids::bigint[]) AND status = 'WAITING';

-- name: FlowKeysStalled :many
SELECT k.task_type, k.flow_key FROM leasegen_flow_keys k
WHERE EXISTS (
    SELECT 1 FROM leasegen_tasks w
    WHERE w.flow_key = k.flow_key AND w.task_type = k.task_type AND w.status = 'WAITING')
  AND k.key_limit > (
    SELECT COUNT(*) FROM leasegen_tasks h
    WHERE h.flow_key = k.flow_key AND h.task_type = k.task_type
      AND h.status IN ('QUEUED', 'RUNNING', 'CANCEL_REQUESTED')) + CASE WHEN k.blocking THEN (SELECT COUNT(*) FROM leasegen_tasks f WHERE f.flow_key = k.flow_key AND f.task_type = k.task_type AND f.status = 'FAILED') ELSE 0 END
  AND (k.rate_limit = 0 OR k.rate_limit > (
    SELECT COUNT(*) FROM leasegen_tasks b
    WHERE b.flow_key = k.flow_key AND b.task_type = k.task_type AND b.status = 'QUEUED' AND b.flow_slot IS NOT NULL))
  AND (k.queue_limit = 0 OR k.queue_limit > (
    SELECT COUNT(*) FROM leasegen_tasks q
    WHERE q.flow_key = k.flow_key AND q.task_type = k.task_type AND q.status = 'QUEUED'))
LIMIT $1;

-- name: FlowKeyList :many
SELECT k.task_type, k.flow_key, k.key_limit, k.blocking, k.rate_limit, k.rate_window_us, k.queue_limit,
  (SELECT COUNT(*) FROM leasegen_flow_slots s
   WHERE s.task_type = k.task_type AND s.flow_key = k.flow_key
     AND (s.free_at > now() OR EXISTS (
       SELECT 1 FROM leasegen_tasks b
       WHERE b.flow_key = s.flow_key AND b.task_type = s.task_type AND b.status = 'QUEUED' AND b.flow_slot = s.slot))) AS in_window,
  (SELECT COUNT(*) FROM leasegen_tasks r
   WHERE r.flow_key = k.flow_key AND r.task_type = k.task_type
     AND r.status IN ('RUNNING', 'CANCEL_REQUESTED')) AS running,
  (SELECT COUNT(*) FROM leasegen_tasks h
   WHERE h.flow_key = k.flow_key AND h.task_type = k.task_type
     AND h.status IN ('QUEUED', 'RUNNING', 'CANCEL_REQUESTED')) + CASE WHEN k.blocking THEN (SELECT COUNT(*) FROM leasegen_tasks f WHERE f.flow_key = k.flow_key AND f.task_type = k.task_type AND f.status = 'FAILED') ELSE 0 END AS holding,
  (SELECT COUNT(*) FROM leasegen_tasks w
   WHERE w.flow_key = k.flow_key AND w.task_type = k.task_type AND w.status = 'WAITING') AS waiting
FROM leasegen_flow_keys k
ORDER BY k.task_type, k.flow_key
LIMIT $1;


-- name: FlowSlotsPending :many
-- The rate slots of keys that their QUEUED tasks took and have not used
-- yet.
SELECT flow_key::text AS flow_key, flow_slot::integer AS flow_slot
FROM leasegen_tasks
WHERE flow_key = ANY(@flow_keys::text[]) AND task_type = @task_type
  AND status = 'QUEUED' AND flow_slot IS NOT NULL;

-- name: FlowSlotsGet :many
-- The stored rate slots of keys, with when each may start a task again.
SELECT flow_key, slot, free_at FROM leasegen_flow_slots
WHERE task_type = @task_type AND flow_key = ANY(@flow_keys::text[]);

-- name: FlowSlotUpsert :exec
-- Stores a slot a release hands to a task, with its rate's window, and
-- makes it free no earlier than now: what prunes slots (FlowSlotsPrune)
-- then leaves it alone, and a task that leaves it unused (cancelled
-- while queued) keeps the instant it was free again.
INSERT INTO leasegen_flow_slots (task_type, flow_key, slot, window_us, free_at)
VALUES (@task_type, @flow_key, @slot, @window_us, now())
ON CONFLICT (task_type, flow_key, slot) DO UPDATE
SET window_us = EXCLUDED.window_us, free_at = GREATEST(COALESCE(leasegen_flow_slots.free_at, now()), now());

-- name: FlowTaskQueueInSlot :execrows
-- Gives a waiting task a slot of its key's concurrency and of its rate:
-- it becomes due when the rate slot is free again, at the earliest.
UPDATE leasegen_tasks SET
  status = 'QUEUED',
  flow_slot = @flow_slot,
  available_at = GREATEST(available_at, COALESCE(sqlc.narg(free_at)::timestamptz, available_at),
                          CASE WHEN @fair::boolean THEN now() ELSE available_at END),
  updated_at = now()
WHERE id = @id AND status = 'WAITING';

-- name: FlowSlotsStart :execrows
-- In a claim under limits (leasegen_claim does the same): the rate slots
-- of the claimed tasks are free again a window after this start.
UPDATE leasegen_flow_slots s SET free_at = now() + s.window_us * interval '1 microsecond'
FROM leasegen_tasks t
WHERE t.id = ANY(@ids::bigint[])
  AND s.task_type = t.task_type AND s.flow_key = t.flow_key AND s.slot = t.flow_slot;

-- name: FlowSlotsPrune :execrows
-- Deletes the free slots of keys that no QUEUED task holds, which a
-- release finds free when missing just as when stored. The age is read
-- on the deleted row itself too: a release that hands the slot on
-- meanwhile makes it free from now, and the row as the release left it
-- is what the DELETE checks again before it deletes.
DELETE FROM leasegen_flow_slots s
WHERE s.free_at < now() - interval '1 minute' AND (s.task_type, s.flow_key, s.slot) IN (
  SELECT p.task_type, p.flow_key, p.slot FROM leasegen_flow_slots p
  WHERE p.flow_key <> '' AND p.free_at < now() - interval '1 minute'
    AND NOT EXISTS (
      SELECT 1 FROM leasegen_tasks b
      WHERE b.flow_key = p.flow_key AND b.task_type = p.task_type
        AND b.status = 'QUEUED' AND b.flow_slot = p.slot)
  LIMIT $1);

-- name: RateSlotsTake :many
-- In a claim: up to lim free slots of a task type's rate, skipping those
-- another claim holds.
SELECT slot FROM leasegen_flow_slots
WHERE task_type = @task_type AND flow_key = '' AND slot < @rate_limit
  AND (free_at IS NULL OR free_at <= now())
LIMIT @lim
FOR UPDATE SKIP LOCKED;

-- name: RateSlotsStart :exec
-- In a claim: the type's slots it used are free again a window after
-- this start.
UPDATE leasegen_flow_slots SET free_at = now() + window_us * interval '1 microsecond'
WHERE task_type = @task_type AND flow_key = '' AND slot = ANY(@slots::integer[]);

-- name: RateSlotsEnsure :exec
-- Creates the slots 0..rate_limit-1 of a task type's rate with its
-- window (a worker does at start).
INSERT INTO leasegen_flow_slots (task_type, flow_key, slot, window_us, free_at)
SELECT sqlc.arg(task_type)::text, '', g.n, sqlc.arg(window_us)::bigint, NULL::timestamptz
FROM generate_series(0, sqlc.arg(rate_limit)::integer - 1) AS g(n)
ON CONFLICT (task_type, flow_key, slot) DO UPDATE SET window_us = EXCLUDED.window_us;
