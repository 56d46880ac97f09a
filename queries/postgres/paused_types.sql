-- name: PausedTypeInsert :execrows
-- Pausing a paused type changes nothing and keeps its paused_at.
INSERT INTO leasegen_paused_types (task_type, paused_at) VALUES ($1, now())
ON CONFLICT DO NOTHING;

-- name: PausedTypeDelete :execrows
DELETE FROM leasegen_paused_types WHERE task_type = $1;

-- name: PausedTypeList :many
SELECT task_type, paused_at FROM leasegen_paused_types ORDER BY task_type;
