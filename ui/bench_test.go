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
	"sync/atomic"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime"
)

// envBenchTasks sets how many tasks BenchmarkPages stores (default
// 1,000,000); a large table takes a while to fill.
const envBenchTasks = "LEASEGEN_UI_BENCH_TASKS"

// BenchmarkPages renders the overview, the tasks pages and the types page
// of a UI holding many tasks (LEASEGEN_UI_BENCH_TASKS, default 1,000,000)
// on each engine: a tenth failed and a tenth succeeded, run by a worker,
// the rest queued, over 8 types:
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
			drv, _ := openDriver(b, kind)
			engine := runtime.NewEngine(drv)
			dbtest.Must(b, "migrate", engine.Migrate(bg))
			client, err := runtime.NewClient(engine, runtime.ClientConfig{})
			dbtest.Must(b, "client", err)
			start := time.Now()
			finish(b, engine, client, n/5)
			enqueue(b, client, n-n/5, `{"n":1}`)
			b.Logf("%d tasks stored in %s", n, time.Since(start).Round(time.Second))
			// The first look counts the minutes no worker counted: once.
			start = time.Now()
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

// enqueue stores n tasks with payload over 8 types, 1,000 a batch.
func enqueue(b testing.TB, client *runtime.Client, n int, payload string) {
	reqs := make([]runtime.Request, 1000)
	for done := 0; done < n; done += len(reqs) {
		reqs = reqs[:min(len(reqs), n-done)]
		for i := range reqs {
			reqs[i] = runtime.Request{Type: fmt.Sprintf("type-%d", (done+i)%8), Payload: []byte(payload)}
		}
		if _, err := client.EnqueueMany(bg, reqs); err != nil {
			b.Fatal(err)
		}
	}
}

// finish has a worker run n tasks: half fail, half succeed.
func finish(b testing.TB, engine *runtime.Engine, client *runtime.Client, n int) {
	enqueue(b, client, n/2, `{"fail":true}`)
	enqueue(b, client, n-n/2, `{"fail":false}`)
	w, err := runtime.NewWorker(engine, runtime.Config{MaxConcurrency: 200, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	dbtest.Must(b, "worker", err)
	var ran atomic.Int64
	all := make(chan struct{})
	for i := range 8 {
		dbtest.Must(b, "handle", w.Handle(fmt.Sprintf("type-%d", i), func(_ context.Context, t *runtime.Task) error {
			if ran.Add(1) == int64(n) {
				close(all)
			}
			if strings.Contains(string(t.Payload), "true") {
				return runtime.Permanent(errors.New("boom"))
			}
			return nil
		}))
	}
	dbtest.Must(b, "start", w.Start(bg))
	select {
	case <-all:
	case <-time.After(10 * time.Minute):
		b.Fatalf("the worker ran %d of %d tasks in 10 minutes", ran.Load(), n)
	}
	dbtest.Must(b, "stop", w.Stop(bg))
}
