// Command leasegen-bench measures the lease runtime on this machine and
// prints one table: enqueue rates, the burn-down of queued no-op tasks by one
// and by several worker processes, and of tasks spread over 1,000
// concurrency keys (at key_concurrency=1, sequential, and a rate per key
// that binds) and of a type under a rate that binds, the delays of 50
// small keys behind one key's backlog of 100,000 (with fairness keys and
// without), the burn-down by
// 1, 2, 4 and 8 worker
// hosts (network namespaces; as root), enqueue-to-start latency from the
// worker's own process and from another one, SQL statements per task, the
// recovery delay after a kill -9, a worker's memory, and, in the same run,
// the database's own row-update ceiling and the article's naive algorithm as
// the yardsticks. Every figure is the median of -runs runs, each on a fresh
// database, with its range.
//
//	go run ./cmd/leasegen-bench -mysql 'root@tcp(127.0.0.1:3306)/'   # scratch databases are created and dropped
//	go run ./cmd/leasegen-bench -postgres 'postgres://u:pw@127.0.0.1:5432/postgres?sslmode=disable'
//	go run ./cmd/leasegen-bench -sqlite                              # files in a temporary folder
//	go run ./cmd/leasegen-bench -sqlite -only burn,ceiling -runs 1   # some figures only
//
// The worker processes are this same binary, started with -child.
package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/leasegen/leasegen/internal/nethost"
)

// options are the benchmark's flags.
type options struct {
	mysql       string
	postgres    string
	dbPrefix    string
	sqlite      bool
	runs        int
	burn        int
	workflows   int
	procs       int
	slots       int
	rate        int
	latencyFor  time.Duration
	warmup      time.Duration
	idle        time.Duration
	held        time.Duration
	heldRate    int
	groups      []string
	profileDirs string
	child       childOptions
	// River, in the same passes (-river, with -postgres).
	river         string
	riverCooldown time.Duration
	riverPoll     time.Duration
}

// groups are the figure groups, in the order they run and print.
var groups = []string{"enqueue", "burn", "keys", "fairness", "workflows", "hosts", "ceiling", "latency", "held", "recovery", "footprint", "river"}

func main() {
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "leasegen-bench:", err)
		os.Exit(2)
	}
	if o.child.mode != "" {
		err = runChild(o.child)
	} else {
		err = run(o, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "leasegen-bench:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("leasegen-bench", flag.ContinueOnError)
	fs.StringVar(&o.mysql, "mysql", "", "MySQL/MariaDB server DSN without a database (scratch databases are created and dropped)")
	fs.StringVar(&o.postgres, "postgres", "", "PostgreSQL server URL of a user that may create databases (scratch databases are created and dropped)")
	fs.StringVar(&o.dbPrefix, "db-prefix", "leasegen_bench_", "name prefix of the scratch MySQL and PostgreSQL databases")
	fs.BoolVar(&o.sqlite, "sqlite", false, "benchmark SQLite, in a temporary folder")
	fs.IntVar(&o.runs, "runs", 3, "runs per figure; the median is shown")
	fs.IntVar(&o.burn, "burn", 50000, "no-op tasks in each burn-down")
	fs.IntVar(&o.workflows, "workflows", 1000, "workflows of 5 steps in the workflows group's run")
	fs.IntVar(&o.procs, "procs", 3, "worker processes in the multi-process burn-down")
	fs.IntVar(&o.slots, "slots", 1000, "MaxConcurrency of each burn-down worker")
	fs.IntVar(&o.rate, "rate", 200, "enqueues per second in the latency runs")
	fs.DurationVar(&o.latencyFor, "latency", 20*time.Second, "measured length of each latency run")
	fs.DurationVar(&o.warmup, "warmup", 2*time.Second, "unmeasured lead-in of each latency run, at the same rate")
	fs.DurationVar(&o.idle, "idle", 30*time.Second, "how long a latency run's worker sits idle before the idle figures (30s spans one recovery pass)")
	fs.DurationVar(&o.held, "held", 10*time.Minute, "how long the held group keeps a snapshot open under a steady load (5 windows; its run is taken once, in the first pass)")
	fs.IntVar(&o.heldRate, "held-rate", 400, "tasks per second offered during the held snapshot")
	only := fs.String("only", strings.Join(groups, ","), "figure groups to run: "+strings.Join(groups, ", "))
	fs.StringVar(&o.profileDirs, "cpuprofile", "", "folder for CPU profiles of the burn-down worker processes")
	fs.StringVar(&o.river, "river", "", "with -postgres: a riverbench binary (go build -C bench/river) whose figures join each pass")
	fs.DurationVar(&o.riverCooldown, "river-fetch-cooldown", time.Millisecond, "River's FetchCooldown (its default 100ms caps 100 workers at 1,000 jobs/s)")
	fs.DurationVar(&o.riverPoll, "river-fetch-poll", 100*time.Millisecond, "River's FetchPollInterval")
	o.child.register(fs)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.child.mode != "" {
		return o, nil
	}
	if n := countTrue(o.mysql != "", o.postgres != "", o.sqlite); n != 1 {
		return o, fmt.Errorf("give one of -mysql DSN, -postgres URL and -sqlite")
	}
	if o.river != "" && o.postgres == "" {
		return o, fmt.Errorf("-river needs -postgres: River runs on PostgreSQL only")
	}
	onlySet := false
	fs.Visit(func(f *flag.Flag) { onlySet = onlySet || f.Name == "only" })
	if why := nethost.Unavailable(); why != "" && !onlySet {
		// By default a run without worker hosts leaves their figures out;
		// asked for, they fail with the reason.
		fmt.Fprintf(os.Stderr, "leasegen-bench: the worker hosts figures are left out: %s\n", why)
		*only = strings.Replace(*only, "hosts,", "", 1)
	}
	for _, g := range strings.Split(*only, ",") {
		if !slices.Contains(groups, g) {
			return o, fmt.Errorf("unknown figure group %q in -only (have %s)", g, strings.Join(groups, ", "))
		}
		o.groups = append(o.groups, g)
	}
	if o.held < 5*time.Second || o.heldRate < 1 {
		return o, fmt.Errorf("-held must be at least 5s and -held-rate positive")
	}
	if o.runs < 1 || o.burn < 1000 || o.procs < 1 || o.slots < 1 || o.rate < 1 || o.idle < time.Second {
		return o, fmt.Errorf("-runs, -procs, -slots and -rate must be positive, -burn at least 1000 and -idle at least 1s")
	}
	return o, nil
}

// kind is the engine the options select.
func (o options) kind() string {
	switch {
	case o.sqlite:
		return kindSQLite
	case o.postgres != "":
		return kindPostgres
	}
	return kindMySQL
}

func countTrue(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

func (o options) wants(group string) bool { return slices.Contains(o.groups, group) }
