-- leasegen schema, version 16: MySQL and MariaDB store leasegen_tasks.flow_state
-- instead of computing it (see the MySQL migration of the same number);
-- this engine has no such column, and nothing to change.
SELECT 1;
