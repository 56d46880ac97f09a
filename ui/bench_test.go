package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/leasetest"
)

// envBenchTasks sets how many tasks BenchmarkPages stores (default
// 1,000,000); a large table takes a while to fill.
const envBenchTasks = "LEASEGEN_UI_BENCH_TASKS"

// BenchmarkPages renders the overview, the tasks pages and the types page
// of a UI holding many tasks (LEASEGEN_UI_BENCH_TASKS, default 1,000,000)
// on each engine (fill: a fifth run by a worker, 12,500 of them failed,
// the rest queued, over 8 types, and the workers' count):
//
//	go test -run '^$' -bench Pages -benchtime 20x ./ui/
func BenchmarkPages(b *testing.B) {
	n := 1_000_000
	if s := os.Getenv(envBenchTasks); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1000 {
			b.Fatalf("%s=%q: want a number of tasks, at least 1000", envBenchTasks, s)
		}
	}
	for _, kind := range []string{"mysql", "postgres", "sqlite"} {
		b.Run(kind, func(b *testing.B) {
			client, _ := fill(b, kind, n)
			// The first look counts the minutes no worker counted: once.
			start := time.Now()
			minutes, err := client.Throughput(bg, time.Hour)
			dbtest.Must(b, "throughput", err)
			b.Logf("the first Throughput counted %d minutes in %s", len(minutes), time.Since(start).Round(time.Millisecond))
			h, err := New(client, Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			dbtest.Must(b, "ui", err)
			srv := httptest.NewServer(h)
			defer srv.Close()
			for _, page := range []string{"/", "/tasks", "/tasks?status=FAILED", "/types"} {
				b.Run(page, func(b *testing.B) {
					for b.Loop() {
						resp, err := http.Get(srv.URL + page)
						if err != nil {
							b.Fatal(err)
						}
						_, _ = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						if resp.StatusCode != http.StatusOK {
							b.Fatalf("GET %s: %d", page, resp.StatusCode)
						}
					}
				})
			}
		})
	}
}

// fill opens a database of kind holding n tasks over 8 types (a fifth run
// by a worker: n/80 of type-0 failed, the rest succeeded; the others
// queued) and the workers' count of them, and returns a client of it and
// its driver.
func fill(t testing.TB, kind string, n int) (*runtime.Client, driver.Driver) {
	drv, _ := openDriver(t, kind)
	engine := runtime.NewEngine(drv)
	dbtest.Must(t, "migrate", engine.Migrate(bg))
	client, err := runtime.NewClient(engine, runtime.ClientConfig{})
	dbtest.Must(t, "client", err)
	start := time.Now()
	finish(t, engine, client, n/5)
	enqueue(t, client, n-n/5, 8, `{"n":1}`)
	leasetest.CountTasksNow(t, drv)
	t.Logf("%s: %d tasks stored and counted in %s", kind, n, time.Since(start).Round(time.Second))
	return client, drv
}

// enqueue stores n tasks with payload over the first types of type-0 to
// type-7, 1,000 a batch.
func enqueue(b testing.TB, client *runtime.Client, n, types int, payload string) {
	reqs := make([]runtime.Request, 1000)
	for done := 0; done < n; done += len(reqs) {
		reqs = reqs[:min(len(reqs), n-done)]
		for i := range reqs {
			reqs[i] = runtime.Request{Type: fmt.Sprintf("type-%d", (done+i)%types), Payload: []byte(payload)}
		}
		if _, err := client.EnqueueMany(bg, reqs); err != nil {
			b.Fatal(err)
		}
	}
}

// finish has a worker run n tasks: n/16 of type-0 fail (12,500 of a
// million's fifth; a failure is a statement of its own), the rest, over 8
// types, succeed.
func finish(b testing.TB, engine *runtime.Engine, client *runtime.Client, n int) {
	enqueue(b, client, n/16, 1, `{"fail":true}`)
	enqueue(b, client, n-n/16, 8, `{"fail":false}`)
	w, err := runtime.NewWorker(engine, runtime.Config{MaxConcurrency: 200, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	dbtest.Must(b, "worker", err)
	for i := range 8 {
		dbtest.Must(b, "handle", w.Handle(fmt.Sprintf("type-%d", i), func(_ context.Context, t *runtime.Task) error {
			if strings.Contains(string(t.Payload), "true") {
				return runtime.Permanent(errors.New("boom"))
			}
			return nil
		}))
	}
	dbtest.Must(b, "start", w.Start(bg))
	// Done when the database says so: a handler's run is no proof (a task
	// whose claim came back late runs again).
	finished := 0
	for deadline := time.Now().Add(10 * time.Minute); finished < n; time.Sleep(500 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("the worker finished %d of %d tasks in 10 minutes", finished, n)
		}
		st, err := client.Stats(bg)
		dbtest.Must(b, "stats", err)
		finished = 0
		for _, c := range st.Counts {
			if c.Status.Terminal() {
				finished += c.Tasks
			}
		}
	}
	dbtest.Must(b, "stop", w.Stop(bg))
}
