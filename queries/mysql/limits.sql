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
