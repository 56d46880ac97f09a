-- leasegen schema, version 19: the task types that are parents of
-- workflow steps. A workflow's enqueue (and a spawn) adds the types of its
-- steps that have children; a worker reads the list at most once a second
-- and looks for waiting children only after tasks of those types, so that
-- plain tasks do not pay for workflows that run beside them.
CREATE TABLE IF NOT EXISTS leasegen_parent_types (
  task_type VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  PRIMARY KEY (task_type)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
