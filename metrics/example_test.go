package metrics_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	_ "modernc.org/sqlite"

	"github.com/leasegen/leasegen/metrics"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver/leasesqlite"
)

// Serve /metrics for a worker: register the collectors on your registry,
// observe the engine, watch the queue depth, and expose the registry.
func Example() {
	dir, _ := os.MkdirTemp("", "metrics-example")
	defer os.RemoveAll(dir)
	db, _ := leasesqlite.Open(filepath.Join(dir, "tasks.db"))
	defer db.Close()
	ctx := context.Background()

	reg := prometheus.NewRegistry()
	m, err := metrics.New(reg)
	if err != nil {
		panic(err)
	}
	engine := runtime.NewEngine(leasesqlite.New(db), runtime.WithObserver(m))
	if err := engine.Migrate(ctx); err != nil {
		panic(err)
	}
	client, _ := runtime.NewClient(engine, runtime.ClientConfig{})
	_, _ = client.Enqueue(ctx, "email", []byte(`{"to":"a@example.com"}`))

	watch, stop := context.WithCancel(ctx)
	defer stop()
	go m.WatchQueue(watch, client, 15*time.Second)
	time.Sleep(100 * time.Millisecond) // the first queue read

	server := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer server.Close()
	resp, err := http.Get(server.URL + "/metrics")
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "async_task_enqueued_total") || strings.HasPrefix(line, "async_task_queue_depth") {
			fmt.Println(line)
		}
	}
	// Output:
	// async_task_enqueued_total{type="email"} 1
	// async_task_queue_depth{status="QUEUED",type="email"} 1
}
