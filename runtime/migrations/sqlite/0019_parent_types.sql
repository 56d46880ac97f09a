-- leasegen schema for SQLite, version 19: the task types that are parents
-- of workflow steps (see the MySQL migration of the same number).
CREATE TABLE IF NOT EXISTS leasegen_parent_types (
  task_type TEXT PRIMARY KEY
) WITHOUT ROWID;
