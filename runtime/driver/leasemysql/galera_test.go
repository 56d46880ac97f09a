package leasemysql

import (
	"database/sql"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime/driver/drivertest"
	"github.com/leasegen/leasegen/runtime/internal/systemtest"
)

// galeraDB creates a database on the first node of the Galera cluster of
// dbtest.EnvGaleraDSNs and returns it with a pool on it through every node.
func galeraDB(t *testing.T) (*drivertest.DB, []*sql.DB) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the Galera cases need a cluster (make test starts one)")
	}
	nodes := dbtest.GaleraNodes(t)
	d := dbtest.NewOn(t, nodes[0])
	pools := make([]*sql.DB, len(nodes))
	for i, node := range nodes {
		cfg, err := mysql.ParseDSN(node)
		dbtest.Must(t, "node DSN", err)
		pools[i] = harness.OpenPool(t, harness.WithServerAddr(d.DSN, cfg.Addr))
	}
	return drivertest.OpenDB(t, &harness, d.DSN), pools
}

// Eight workers spread over the three nodes of a Galera cluster, where
// row locks are each node's own and only written rows are certified: the
// limits hold across the nodes and every task's effect commits once.
func TestGaleraWorkersOnEveryNode(t *testing.T) {
	t.Parallel()
	db, pools := galeraDB(t)
	systemtest.ManyWorkersAcross(t, systemtest.SetupOn(t, &harness, db), pools)
}
