-- leasegen schema, version 13: a claim under a limit writes its limit
-- rows. It locked them with SELECT ... FOR UPDATE, which serializes the
-- claimers of one server; on a MariaDB Galera cluster each node's row
-- locks are its own and certification sees only the rows a transaction
-- writes, so claims on two nodes both took the lock, both counted the
-- same running tasks, and ran past the limit. The claim now bumps
-- version, which takes the same lock on one server and, on Galera, puts
-- the rows in its write set: of two claims on two nodes, the second to
-- commit fails certification and runs again. Worker.Start bumps the
-- registry's row ('') for the same reason. Added only while missing, so
-- the step can run again.
SET @leasegen_v13 = IF(EXISTS (SELECT 1 FROM information_schema.columns
    WHERE table_schema = DATABASE() AND table_name = 'leasegen_limits' AND column_name = 'version'),
  'DO 0',
  'ALTER TABLE leasegen_limits ADD COLUMN version BIGINT NOT NULL DEFAULT 0');
PREPARE leasegen_v13 FROM @leasegen_v13;
EXECUTE leasegen_v13;
DEALLOCATE PREPARE leasegen_v13;
