package ui

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver/leasemysql"
)

// envBenchTasks sets how many tasks BenchmarkPages stores (default
// 1,000,000); a large table takes a while to fill.
const envBenchTasks = "LEASEGEN_UI_BENCH_TASKS"

// BenchmarkPages renders the overview and the first tasks page of a UI on
// MariaDB/MySQL holding many tasks (LEASEGEN_UI_BENCH_TASKS, default
// 1,000,000): a tenth failed and a tenth succeeded in the last hour,
// the rest queued:
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
	db := dbtest.New(b)
	engine := runtime.NewEngine(leasemysql.New(db.DB))
	dbtest.Must(b, "migrate", engine.Migrate(context.Background()))
	client, err := runtime.NewClient(engine, runtime.ClientConfig{})
	dbtest.Must(b, "client", err)
	start := time.Now()
	reqs := make([]runtime.Request, 1000)
	for done := 0; done < n; done += len(reqs) {
		for i := range reqs {
			reqs[i] = runtime.Request{Type: fmt.Sprintf("type-%d", (done+i)%8), Payload: []byte(`{"n":1}`)}
		}
		if _, err := client.EnqueueMany(context.Background(), reqs); err != nil {
			b.Fatal(err)
		}
	}
	// A tenth failed and a tenth succeeded, spread over the last hour.
	for _, q := range []string{
		"UPDATE leasegen_tasks SET status = 'FAILED', due_priority = 0, due_at = NOW(3) - INTERVAL (id % 3600) SECOND, last_error = 'boom' WHERE id % 10 = 0",
		"UPDATE leasegen_tasks SET status = 'SUCCESS', due_priority = 0, due_at = NOW(3) - INTERVAL (id % 3600) SECOND WHERE id % 10 = 1",
	} {
		if _, err := db.DB.Exec(q); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("%d tasks stored in %s", n, time.Since(start).Round(time.Second))
	// The first look counts the hour no worker counted: once.
	start = time.Now()
	minutes, err := client.Throughput(context.Background(), time.Hour)
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
}
