// Command leasegen-bench measures the runtime on this machine: enqueue
// rates and the burn-down of queued no-op tasks by one worker, on MariaDB
// or SQLite, each figure the median of several runs with its range.
//
//	go run ./cmd/leasegen-bench -mysql 'root@tcp(127.0.0.1:3306)/'   # a scratch database is created and dropped
//	go run ./cmd/leasegen-bench -sqlite                              # a file in a temporary folder
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"time"
)

func main() {
	var o options
	flag.StringVar(&o.mysql, "mysql", "", "MySQL/MariaDB server DSN (no database: a scratch one is created and dropped)")
	flag.BoolVar(&o.sqlite, "sqlite", false, "benchmark SQLite in a temporary folder")
	flag.IntVar(&o.runs, "runs", 3, "runs per figure (the median is shown)")
	flag.IntVar(&o.burn, "burn", 50000, "tasks in the burn-down")
	flag.IntVar(&o.concurrency, "concurrency", 256, "the burn-down worker's MaxConcurrency")
	flag.IntVar(&o.rate, "rate", 200, "enqueues per second in the latency runs")
	flag.DurationVar(&o.latencyFor, "latency", 20*time.Second, "length of each latency run (0 skips them)")
	flag.Parse()
	if (o.mysql == "") == !o.sqlite {
		fmt.Fprintln(os.Stderr, "leasegen-bench: give -mysql DSN or -sqlite")
		os.Exit(2)
	}
	fmt.Printf("machine: %d cores, %s/%s, Go %s\n", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "leasegen-bench:", err)
		os.Exit(1)
	}
}
