// Command leasegen-demo shows leasegen's promise in a minute: it enqueues a
// few thousand tasks of the example service, runs them on three worker
// processes, kill -9s one of them in the middle of its work and restarts
// it, and proves at the end that every task finished, that the crashed
// worker's tasks were recovered within the configured bound, that no
// database effect happened twice, and that the service's periodic task
// ticked once per tick throughout.
//
//	go run ./cmd/leasegen-demo                 # on an embedded SQLite file
//	go run ./cmd/leasegen-demo -dsn 'u:p@tcp(127.0.0.1:3306)/demo?parseTime=true'
//	go run ./cmd/leasegen-demo -ui 127.0.0.1:8080   # with the web UI
package main

import (
	"flag"
	"fmt"
	"os"
	"time"
)

// config is what a demo run (and each of its worker processes) uses.
type config struct {
	dsn     string // MySQL DSN; empty means a SQLite file in a temporary folder
	tasks   int
	workers int
	work    time.Duration
	// Lease parameters: short, so that the recovery is visible.
	lease, heartbeat, recovery, poll time.Duration

	ui string // address of the web UI; empty: none

	// Worker-process mode.
	workerID string
	sqlite   string // the SQLite file a worker process opens
}

func main() {
	var c config
	flag.StringVar(&c.dsn, "dsn", "", "run on this database instead of an embedded SQLite file: a postgres:// URL, or a MySQL/MariaDB DSN")
	flag.IntVar(&c.tasks, "tasks", 4000, "tasks to enqueue")
	flag.IntVar(&c.workers, "workers", 3, "worker processes")
	flag.DurationVar(&c.work, "work", 150*time.Millisecond, "how long an export or notify task works")
	flag.StringVar(&c.workerID, "worker", "", "run as the worker process with this id (used by the demo itself)")
	flag.StringVar(&c.sqlite, "sqlite", "", "SQLite file of a worker process (used by the demo itself)")
	flag.StringVar(&c.ui, "ui", "", "serve the operator web UI on this address (such as 127.0.0.1:8080) while the demo runs, and after it until interrupted")
	flag.Parse()
	c.lease, c.heartbeat, c.recovery, c.poll = 2*time.Second, 400*time.Millisecond, time.Second, 200*time.Millisecond

	var err error
	if c.workerID != "" {
		err = runWorker(c)
	} else {
		err = runDemo(c)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "leasegen-demo:", err)
		os.Exit(1)
	}
}
