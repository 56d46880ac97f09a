// Command tablesgen writes each driver's tables_gen.go from tables.go.tmpl:
// the bookkeeping tables' queries mapped between the contract's types and
// sqlc's, written once for every engine. What the engines store
// differently (instants, integer widths, booleans, duration units) is the
// engines table below.
//
// Run by go generate in runtime/driver (make generate); with -check it
// writes nothing and fails when a file is stale (make check).
package main

import (
	"bytes"
	_ "embed"
	"flag"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"text/template"
)

//go:embed tables.go.tmpl
var source string

// engine is what the template fills in for one driver: its names, and how
// each kind of value converts between the contract's Go type and the one
// sqlc gives the engine's column (a format with one %s, the value).
type engine struct {
	Package  string // the driver's package, and its folder under runtime/driver
	Queries  string // its sqlc package, under the driver's internal folder
	Unit     string // suffix of the duration arguments' names: Us or Ms
	TimeType string // Go type of an instant column
	// FlowStatus is the column that is 'WAITING' for a keyed task that
	// waits for its key;
	// Numbered says the placeholders are $1, $2... rather than ?.
	FlowStatus    string
	Numbered      bool
	FlowIndexHint string // what follows the table's name to read the keyed tasks' index
	// ArrayKeys says the engine's key queries take arrays: one statement
	// for all of an enqueue's keys rather than one a key.
	ArrayKeys bool
	convert   map[string]string
}

var engines = []engine{
	{Package: "leasemysql", Queries: "mysqldb", Unit: "Us", TimeType: "time.Time", FlowStatus: "flow_state", FlowIndexHint: " FORCE INDEX (leasegen_tasks_flow)", convert: map[string]string{
		// DATETIME(3) reads back in UTC: the session's time zone is UTC.
		"int": "int32(%s)", "span": "micros(%s)", "wrap": "%s",
		"dbTime": "%s", "goTime": "%s", "dbNullTime": "sqlbuild.NullTime(%s)", "goNullTime": "%s.Time",
		"dbFinish": "sqlbuild.TimeOrNil(%s)", "dbBool": "%s", "goBool": "%s",
		"dbKey": "sql.NullString{String: %s, Valid: true}", "owner": "%s", "startedAt": "fromMySQLStartedAt(%s)",
		"dbFlowKeys": "sqlbuild.NullStrings(%s)", "goFlowKey": "%s.String",
		"dbSlot": "sql.NullInt32{Int32: int32(%s), Valid: true}",
	}},
	{Package: "leasepostgres", Queries: "pgdb", Unit: "Us", TimeType: "time.Time", FlowStatus: "status", Numbered: true, ArrayKeys: true, convert: map[string]string{
		// pgx reads timestamptz in the local zone; arrays pass as slices.
		"int": "int32(%s)", "span": "micros(%s)", "wrap": "nativeArrays{%s}",
		"dbTime": "%s", "goTime": "%s.UTC()", "dbNullTime": "sqlbuild.NullTime(%s)", "goNullTime": "%s.Time.UTC()",
		"dbFinish": "sqlbuild.NullTime(%s)", "dbBool": "%s", "goBool": "%s",
		"dbKey": "%s", "owner": "%s", "startedAt": "utc(%s)",
		"dbFlowKeys": "%s", "goFlowKey": "%s",
		"dbSlot": "sql.NullInt32{Int32: int32(%s), Valid: true}",
	}},
	{Package: "leasesqlite", Queries: "sqlitedb", Unit: "Ms", TimeType: "int64", FlowStatus: "status", convert: map[string]string{
		// Instants are Unix milliseconds, integers int64, booleans 0 or 1.
		"int": "int64(%s)", "span": "millis(%s)", "wrap": "%s",
		"dbTime": "%s.UnixMilli()", "goTime": "fromMillis(%s)", "dbNullTime": "nullMillis(%s)", "goNullTime": "fromNullMillis(%s)",
		"dbFinish": "sqlbuild.MillisOrNil(%s)", "dbBool": "sqlbuild.BoolInt(%s)", "goBool": "%s != 0",
		"dbKey": "%s", "owner": "%s.String", "startedAt": "fromNullMillis(%s)",
		"dbFlowKeys": "sqlbuild.NullStrings(%s)", "goFlowKey": "%s",
		"dbSlot": "sql.NullInt64{Int64: int64(%s), Valid: true}",
	}},
}

// funcs are e's conversions as template functions: {{goTime "r.NextRun"}}.
func (e engine) funcs() template.FuncMap {
	m := template.FuncMap{}
	for name, format := range e.convert {
		m[name] = func(value string) string { return fmt.Sprintf(format, value) }
	}
	return m
}

func main() {
	dir := flag.String("dir", ".", "runtime/driver: the folder that holds the drivers")
	check := flag.Bool("check", false, "write nothing; fail when a tables_gen.go is stale")
	flag.Parse()
	if err := run(*dir, *check); err != nil {
		fmt.Fprintln(os.Stderr, "tablesgen:", err)
		os.Exit(1)
	}
}

func run(dir string, check bool) error {
	for _, e := range engines {
		tmpl, err := template.New("tables.go.tmpl").Funcs(e.funcs()).Option("missingkey=error").Parse(source)
		if err != nil {
			return err
		}
		e.Queries = "github.com/leasegen/leasegen/runtime/driver/" + e.Package + "/internal/" + e.Queries
		var buf bytes.Buffer
		if err := tmpl.Execute(&buf, e); err != nil {
			return fmt.Errorf("%s: %w", e.Package, err)
		}
		code, err := format.Source(buf.Bytes())
		if err != nil {
			return fmt.Errorf("%s: the template gives Go that does not parse: %w", e.Package, err)
		}
		path := filepath.Join(dir, e.Package, "tables_gen.go")
		if check {
			have, err := os.ReadFile(path)
			if err != nil || !bytes.Equal(have, code) {
				return fmt.Errorf("%s is stale: run make generate", path)
			}
			continue
		}
		if err := os.WriteFile(path, code, 0o644); err != nil {
			return err
		}
	}
	return nil
}
