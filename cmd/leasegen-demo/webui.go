package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/ui"
)

// webUI is the operator UI the demo serves with -ui.
type webUI struct {
	srv *http.Server
	ln  net.Listener
}

// startUI serves the UI on addr while the demo runs.
func startUI(engine *runtime.Engine, addr string) (*webUI, error) {
	client, err := runtime.NewClient(engine, runtime.ClientConfig{})
	if err != nil {
		return nil, err
	}
	h, err := ui.New(client, ui.Options{Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("-ui %s: %w", addr, err)
	}
	u := &webUI{srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}, ln: ln}
	go func() { _ = u.srv.Serve(ln) }()
	fmt.Printf("ui:         http://%s/ (open while the demo runs)\n", ln.Addr())
	return u, nil
}

// holdUntilInterrupted keeps the UI open after the summary until SIGINT or
// SIGTERM.
func (u *webUI) holdUntilInterrupted() {
	fmt.Printf("ui:         still at http://%s/ ; Ctrl-C ends the demo\n", u.ln.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := u.srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, "leasegen-demo: closing the UI:", err)
	}
}
