-- Queries on leasegen_limits: one row per limited scope, written by claims.

-- name: LimitEnsure :exec
INSERT IGNORE INTO leasegen_limits (scope) VALUES (?);

-- name: LimitLock :execrows
-- Serializes the claimers of limited scopes: the rows' locks are held
-- until the claim commits, and the write puts them in the claim's Galera
-- write set (certification sees only written rows, never locks).
UPDATE leasegen_limits SET version = version + 1
WHERE scope IN (sqlc.slice(scopes))
ORDER BY scope;

-- name: ClaimTurnTake :many
-- A claim's first statement: the claim turn's row (scope 'claim turn',
-- which no task type can name: types have no spaces), locked until the
-- claim commits, so the claims of every worker on a server take turns and
-- none steps over the rows another holds; with it the paused types, which
-- the scans that follow leave out (their rows locked too: a Pause waits
-- for the claim). A locking read that writes nothing: Galera certifies
-- written rows only, so each node's claims take turns among themselves
-- and never conflict with another node's. No row: LimitEnsure creates it.
SELECT l.scope, p.task_type FROM leasegen_limits l
LEFT JOIN leasegen_paused_types p ON 1 = 1
WHERE l.scope = 'claim turn'
FOR UPDATE;
