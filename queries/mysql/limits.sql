-- Queries on leasegen_limits: one row per limited scope, locked by claims.

-- name: LimitEnsure :exec
INSERT IGNORE INTO leasegen_limits (scope) VALUES (?);

-- name: LimitLock :many
-- Serializes the claimers of limited scopes; held until the claim commits.
SELECT scope FROM leasegen_limits
WHERE scope IN (sqlc.slice(scopes))
ORDER BY scope
FOR UPDATE;
