package driver

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// A program links only the drivers it imports: a service on SQLite does
// not carry the MySQL or PostgreSQL driver, and so on, and the runtime
// alone carries none; leasetest links none either, its SQLite test engine
// being a package of its own.
func TestProgramsLinkOnlyTheirDriver(t *testing.T) {
	t.Parallel()
	const (
		module     = "github.com/leasegen/leasegen/"
		mysqlLib   = "github.com/go-sql-driver/mysql"
		sqliteLib  = "modernc.org/sqlite"
		pgxLib     = "github.com/jackc/pgx/v5/stdlib"
		runtimePkg = module + "runtime"
	)
	for _, c := range []struct {
		name    string
		imports []string
		want    string // a library it must link
		not     []string
	}{
		{"runtime alone", []string{runtimePkg, module + "metrics"}, "", []string{mysqlLib, sqliteLib, pgxLib}},
		{"SQLite only", []string{runtimePkg, module + "runtime/driver/leasesqlite"}, sqliteLib, []string{mysqlLib, pgxLib}},
		{"MySQL only", []string{runtimePkg, module + "runtime/driver/leasemysql"}, mysqlLib, []string{sqliteLib, pgxLib}},
		{"PostgreSQL only", []string{runtimePkg, module + "runtime/driver/leasepostgres"}, pgxLib, []string{mysqlLib, sqliteLib}},
		{"MySQL service's tests", []string{module + "runtime/driver/leasemysql", module + "runtime/leasetest"}, mysqlLib, []string{sqliteLib, pgxLib}},
		{"tests on the SQLite test engine", []string{module + "runtime/leasetest", module + "runtime/leasetest/sqlitetest"}, sqliteLib, []string{mysqlLib, pgxLib}},
	} {
		out, err := exec.Command("go", append([]string{"list", "-deps"}, c.imports...)...).Output()
		if err != nil {
			t.Fatalf("%s: go list -deps: %v", c.name, err)
		}
		deps := strings.Fields(string(out))
		if c.want != "" && !slices.Contains(deps, c.want) {
			t.Errorf("%s: %s is not among its %d dependencies: the check looks in the wrong place", c.name, c.want, len(deps))
		}
		for _, lib := range c.not {
			if slices.Contains(deps, lib) {
				t.Errorf("%s links %s", c.name, lib)
			}
		}
	}
}
