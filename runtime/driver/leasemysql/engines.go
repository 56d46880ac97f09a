package leasemysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/leasegen/leasegen/runtime/leasetype"
)

// refuse returns leasetype.ErrUnsupportedDatabase, saying why, for a
// server of version that speaks MySQL's protocol yet cannot hold the
// lease protocol's guarantees, and nil for any other.
func refuse(version string) error {
	if strings.Contains(version, "TiDB") {
		// pingcap/tidb#69720
		return fmt.Errorf("%w: TiDB (%s) accepts FOR UPDATE SKIP LOCKED but takes no lock, so two workers would claim, and run, the same task; use MySQL 8+ or MariaDB 10.6+",
			leasetype.ErrUnsupportedDatabase, version)
	}
	return nil
}

// galeraNotes reads whether the server is a node of a MariaDB Galera
// cluster and, when it is, says what that means for a worker.
func galeraNotes(ctx context.Context, db *sql.DB) ([]string, error) {
	var name, on string
	err := db.QueryRowContext(ctx, "SHOW GLOBAL VARIABLES LIKE 'wsrep_on'").Scan(&name, &on)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && on != "ON") {
		return nil, nil // not MariaDB, or no Galera
	}
	if err != nil {
		return nil, err
	}
	var size string
	err = db.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'wsrep_cluster_size'").Scan(&name, &size)
	if err != nil {
		return nil, err
	}
	return []string{fmt.Sprintf("the MySQL server is a node of a Galera cluster of %s nodes: every node applies every write, "+
		"so workers spread over several nodes run no faster than on one (replication buys availability, not write speed); "+
		"limits stay exact across the nodes, and a claim or an outcome that loses a certification conflict to another node runs again "+
		"(the engine's conflict retries count them)", size)}, nil
}
