-- name: PausedTypeInsert :execrows
-- Pausing a paused type changes nothing and keeps its paused_at.
INSERT IGNORE INTO leasegen_paused_types (task_type, paused_at) VALUES (?, NOW(3));

-- name: PausedTypeDelete :execrows
DELETE FROM leasegen_paused_types WHERE task_type = ?;

-- name: PausedTypeList :many
SELECT task_type, paused_at FROM leasegen_paused_types ORDER BY task_type;

-- name: PausedTypeNames :many
-- A claim's first read: the scans that follow leave these types out.
SELECT task_type FROM leasegen_paused_types;
