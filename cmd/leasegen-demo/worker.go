package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/leasegen/leasegen/internal/engines"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/testdata/example/billing"
)

// runWorker is one worker process: the example service's handlers on a
// runtime worker, until SIGTERM (or SIGKILL).
func runWorker(c config) error {
	engine, _, err := openEngine(c)
	if err != nil {
		return err
	}
	w, err := runtime.NewWorker(engine, runtime.Config{
		LeaseTimeout:      c.lease,
		HeartbeatInterval: c.heartbeat,
		RecoveryInterval:  c.recovery,
		PollInterval:      c.poll,
		MaxConcurrency:    16,
		WorkerID:          c.workerID,
		Logger:            slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return err
	}
	if err := billing.Register(w, &billing.Service{Work: c.work, Postgres: engines.IsPostgres(c.dsn)}); err != nil {
		return err
	}
	if err := w.Start(context.Background()); err != nil {
		return err
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, os.Interrupt)
	<-stop
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return w.Stop(ctx)
}
