// Package ui serves leasegen's operator web UI: an http.Handler a service
// mounts in its own mux, or that leasectl ui serves alone. Its pages are
// server-rendered (html/template, embedded CSS, a little plain
// JavaScript); every write is a POST with a CSRF token, goes through the
// same fenced runtime.Client methods as leasectl, and is logged with the
// user the Authorize hook named. Without an Authorize hook that grants
// writes it is read-only.
//
//	h, err := ui.New(client, ui.Options{Prefix: "/tasks-ui", Authorize: myAuth})
//	mux.Handle("/tasks-ui/", h)
package ui

import (
	"crypto/rand"
	"embed"
	"encoding/hex"
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"strings"

	"github.com/leasegen/leasegen/runtime"
)

//go:embed assets templates
var files embed.FS

// Access is what the Authorize hook allows a request.
type Access struct {
	User  string // logged with every action
	Write bool   // may retry, cancel, pause and resume
}

// Options configures the UI.
type Options struct {
	// Prefix is the path the UI is mounted under ("/tasks-ui"); "" for
	// the root.
	Prefix string
	// ReadOnly hides and refuses every action, whatever Authorize says.
	ReadOnly bool
	// Authorize names the request's user and whether it may write; an
	// error refuses the request (403). Nil: every request is "anonymous"
	// and read-only, so that a UI mounted on a public mux exposes no
	// action; AnyoneMayWrite grants writes to every request, for a UI
	// that only trusted users reach (a loopback address, a mux behind the
	// service's own authentication).
	Authorize func(r *http.Request) (Access, error)
	// Redact returns the payload to show for a task; nil shows it as
	// stored.
	Redact func(t runtime.TaskInfo) []byte
	// RedactError returns the error text to show for a task (its last
	// error, and each attempt's), which often quotes the payload. Nil
	// shows errors as stored unless Redact is set: then they are hidden
	// too, until RedactError says what to show.
	RedactError func(t runtime.TaskInfo, text string) string
	// Logger receives one line per action. Default slog.Default().
	Logger *slog.Logger
}

// ErrNoClient reports New without a client.
var ErrNoClient = errors.New("leasegen ui: a runtime.Client is required")

// New returns the UI's handler on client.
func New(client *runtime.Client, opts Options) (http.Handler, error) {
	if client == nil {
		return nil, ErrNoClient
	}
	opts.Prefix = strings.TrimSuffix(opts.Prefix, "/")
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	tmpl, err := template.New("").Funcs(funcs).ParseFS(files, "templates/*.html")
	if err != nil {
		return nil, err
	}
	s := &server{client: client, opts: opts, tmpl: tmpl, flash: newFlasher()}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.page(s.overview))
	mux.HandleFunc("GET /tasks", s.page(s.tasks))
	mux.HandleFunc("GET /tasks/{id}", s.page(s.task))
	mux.HandleFunc("POST /tasks/{id}/{action}", s.action(s.taskAction))
	mux.HandleFunc("POST /bulk", s.action(s.bulk))
	mux.HandleFunc("POST /matching", s.action(s.matching))
	mux.HandleFunc("GET /workers", s.page(s.workers))
	mux.HandleFunc("GET /types", s.page(s.types))
	mux.HandleFunc("GET /keys", s.page(s.keys))
	mux.HandleFunc("POST /types/{type}/{action}", s.action(s.typeAction))
	mux.HandleFunc("GET /schedules", s.page(s.schedules))
	mux.HandleFunc("GET /workflows", s.page(s.workflows))
	mux.HandleFunc("GET /workflows/{id}", s.page(s.workflow))
	mux.HandleFunc("POST /workflows/{id}/{action}", s.action(s.workflowAction))
	mux.HandleFunc("POST /schedules/{name}/{action}", s.action(s.scheduleAction))
	mux.Handle("GET /assets/", http.FileServerFS(files))
	var h http.Handler = mux
	if opts.Prefix != "" {
		h = http.StripPrefix(opts.Prefix, mux)
	}
	return secure(h), nil
}

// server renders the pages and runs the actions.
type server struct {
	client *runtime.Client
	opts   Options
	tmpl   *template.Template
	flash  *flasher
}

// secure sets the headers every response carries: a content security
// policy that allows only the UI's own CSS and script, no framing, no
// sniffing, no referrer.
func secure(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Referrer-Policy", "no-referrer")
		h.ServeHTTP(w, r)
	})
}

// AnyoneMayWrite is an Authorize hook that lets every request retry,
// cancel, pause and resume, as "anonymous".
func AnyoneMayWrite(*http.Request) (Access, error) {
	return Access{User: "anonymous", Write: true}, nil
}

// access runs the Authorize hook.
func (s *server) access(r *http.Request) (Access, error) {
	a := Access{User: "anonymous"}
	if s.opts.Authorize != nil {
		var err error
		if a, err = s.opts.Authorize(r); err != nil {
			return Access{}, err
		}
	}
	if s.opts.ReadOnly {
		a.Write = false
	}
	return a, nil
}

// csrfCookie holds the request's CSRF token; every form sends it back.
const csrfCookie = "leasegen_csrf"

// csrfToken returns the request's token, setting a new one when it has
// none.
func csrfToken(w http.ResponseWriter, r *http.Request, secureCookie bool) string {
	if c, err := r.Cookie(csrfCookie); err == nil && len(c.Value) == 64 {
		return c.Value
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand does not fail
	token := hex.EncodeToString(b)
	http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: secureCookie})
	return token
}
