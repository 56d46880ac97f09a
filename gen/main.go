package gen

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// Main runs the leasegen command with args (without the program name) and
// returns its exit code: 0 on success, 1 for bad input or stale output, 2
// for bad usage. It prints nothing on success.
func Main(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("leasegen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: leasegen [flags] [packages]

leasegen generates typed enqueue methods, handler interfaces and Register
for the //leasegen:task payload types of each package (default: the package
in the current directory), into leasegen_gen.go.

Flags:
`)
		fs.PrintDefaults()
	}
	var cfg Config
	fs.BoolVar(&cfg.Check, "check", false, "write nothing; exit 1 with a diff when a generated file is stale")
	fs.StringVar(&cfg.Output, "output", DefaultOutput, "name of the generated file in each package")
	fs.StringVar(&cfg.Schema, "schema", "", "also render the schema SQL for your own migration tool to this `file`")
	fs.StringVar(&cfg.Engine, "schema-engine", "mysql", "the schema's database: mysql, postgres or sqlite")
	fs.StringVar(&cfg.Alerts, "alerts", "", "also render Prometheus alert rules for the package's task types to this `file`")
	fs.StringVar(&cfg.Dashboard, "dashboard", "", "also render a Grafana dashboard for the package's task types to this `file`")
	fs.BoolVar(&cfg.TestHelpers, "testhelpers", false, "also write typed test assertions (package NAMEtest, in the folder NAMEtest) for each package's tasks")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if _, ok := schemaEngines[cfg.Engine]; !ok {
		fmt.Fprintf(stderr, "leasegen: -schema-engine %q: use mysql, postgres or sqlite\n", cfg.Engine)
		return 2
	}
	cfg.Patterns = fs.Args()
	cfg.Stderr = stderr
	if err := Run(cfg); err != nil {
		var list ErrorList
		if errors.As(err, &list) {
			for _, e := range list {
				fmt.Fprintln(stderr, e)
			}
			fmt.Fprintf(stderr, "leasegen: %d error(s)\n", len(list))
			return 1
		}
		fmt.Fprintln(stderr, "leasegen:", err)
		return 1
	}
	return 0
}
