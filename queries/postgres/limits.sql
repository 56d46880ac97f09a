-- Queries on leasegen_limits: one row per limited scope, locked by claims.

-- name: LimitEnsure :exec
INSERT INTO leasegen_limits (scope) VALUES ($1) ON CONFLICT DO NOTHING;

-- name: LimitLock :many
-- Serializes the claimers of limited scopes; held until the claim commits.
SELECT scope FROM leasegen_limits
WHERE scope = ANY(@scopes::text[])
ORDER BY scope
FOR UPDATE;
