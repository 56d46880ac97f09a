package leasectl

import (
	"bufio"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/ui"
)

// serveUI serves the web UI until interrupted. On an address that is not
// loopback it refuses to start without credentials.
func serveUI(ctx context.Context, e *env, args []string) error {
	fs := newFlags("ui")
	addr := fs.String("addr", "127.0.0.1:8080", "")
	readOnly := fs.Bool("read-only", false, "")
	authFile := fs.String("basic-auth-file", "", "")
	if _, err := parse(fs, args, 0); err != nil {
		return err
	}
	users, err := readUsers(*authFile)
	if err != nil {
		return err
	}
	if users == nil && !loopback(*addr) {
		return fmt.Errorf("%w: ui -addr %s is not a loopback address: give -basic-auth-file FILE (lines of user:password), or serve on 127.0.0.1", errUsage, *addr)
	}
	// On a loopback address without users, the operator at this machine
	// may act; with users, each is named in the action log.
	opts := ui.Options{ReadOnly: *readOnly, Authorize: ui.AnyoneMayWrite, Logger: slog.New(slog.NewTextHandler(e.stderr, nil))}
	if users != nil {
		opts.Authorize = basicAuth(users)
	}
	h, err := ui.New(e.client, opts)
	if err != nil {
		return err
	}
	if users != nil {
		h = challenge(h)
	}
	if pending, err := pendingMigrations(ctx, e.engine); err != nil {
		return err
	} else if pending > 0 {
		fmt.Fprintf(e.stdout, "note: the database lacks %d of leasegen's schema versions: the pages say so until leasectl migrate up applies them\n", pending)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(e.stdout, "leasectl ui on http://%s/ (Ctrl-C stops it)\n", ln.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// loopback reports whether addr listens on a loopback interface only.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// readUsers reads user:password lines; nil without a file.
func readUsers(path string) (map[string]string, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("ui -basic-auth-file: %w", err)
	}
	defer f.Close()
	users := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		user, pass, ok := strings.Cut(line, ":")
		if !ok || user == "" || pass == "" {
			return nil, fmt.Errorf("%w: ui -basic-auth-file %s line %d: want user:password", errUsage, path, n)
		}
		users[user] = pass
	}
	if len(users) == 0 {
		return nil, fmt.Errorf("%w: ui -basic-auth-file %s names no user", errUsage, path)
	}
	return users, sc.Err()
}

// basicAuth admits the users of the file, each with write access.
func basicAuth(users map[string]string) func(*http.Request) (ui.Access, error) {
	return func(r *http.Request) (ui.Access, error) {
		user, pass, ok := r.BasicAuth()
		want, known := users[user]
		if !ok || !known || subtle.ConstantTimeCompare([]byte(pass), []byte(want)) != 1 {
			return ui.Access{}, errors.New("sign in with a user of the -basic-auth-file")
		}
		return ui.Access{User: user, Write: true}, nil
	}
}

// challenge asks a browser for credentials when a request has none.
func challenge(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, _, ok := r.BasicAuth(); !ok {
			w.Header().Set("WWW-Authenticate", `Basic realm="leasegen", charset="UTF-8"`)
			http.Error(w, "sign in", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// pendingMigrations counts the schema versions not applied.
func pendingMigrations(ctx context.Context, engine *runtime.Engine) (int, error) {
	states, err := engine.MigrationStatus(ctx)
	n := 0
	for _, st := range states {
		if st.AppliedAt.IsZero() {
			n++
		}
	}
	return n, err
}
