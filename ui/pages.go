package ui

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/leasegen/leasegen/runtime"
)

// pageSize is the tasks a page lists; maxBulk the most a bulk action
// takes; countBound the most tasks of each status a page counts, so that
// it renders as fast with a million tasks as with a thousand.
const (
	pageSize = 50
	maxBulk  = 100
	// maxMatching caps an action on every task a filter matches.
	maxMatching = 10_000
	countBound  = 10_000
)

// view is what every page template gets.
type view struct {
	Base   string // the UI's prefix
	Title  string
	Access Access
	CSRF   string
	Flash  string
	Data   any
}

// handlerFunc renders a page: the template's name and its data.
type handlerFunc func(r *http.Request) (page string, title string, data any, err error)

// page serves a GET with the layout around fn's template.
func (s *server) page(fn handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		a, err := s.access(r)
		if err != nil {
			http.Error(w, "forbidden: "+err.Error(), http.StatusForbidden)
			return
		}
		name, title, data, err := fn(r)
		if err != nil {
			s.fail(w, err)
			return
		}
		s.render(w, r, name, view{Base: s.opts.Prefix, Title: title, Access: a, CSRF: csrfToken(w, r, r.TLS != nil), Flash: s.flash.read(r), Data: data})
	}
}

func (s *server) render(w http.ResponseWriter, r *http.Request, name string, v view) {
	var buf bytes.Buffer
	if err := s.tmpl.ExecuteTemplate(&buf, name, v); err != nil {
		s.fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = buf.WriteTo(w)
}

// fail answers an error: 404 for an unknown task or schedule, else 500,
// without the error's details in the page (they may name the database).
func (s *server) fail(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, runtime.ErrTaskNotFound):
		http.Error(w, "task not found", http.StatusNotFound)
	case errors.Is(err, runtime.ErrWorkflowNotFound):
		http.Error(w, "workflow not found", http.StatusNotFound)
	case errors.Is(err, runtime.ErrUnavailable):
		s.opts.Logger.Error("leasegen ui: the database is unavailable", "err", err)
		http.Error(w, "the database is unavailable; try again", http.StatusServiceUnavailable)
	case errors.Is(err, runtime.ErrNoSchema):
		s.opts.Logger.Error("leasegen ui: the database lacks leasegen's schema", "err", err)
		http.Error(w, "the database lacks leasegen's schema (or its newest versions): run leasectl migrate up, "+
			"or Engine.Migrate, then reload", http.StatusServiceUnavailable)
	default:
		s.opts.Logger.Error("leasegen ui: page failed", "err", err)
		http.Error(w, "internal error (logged)", http.StatusInternalServerError)
	}
}

func (s *server) overview(r *http.Request) (string, string, any, error) {
	st, err := s.client.BoundedStats(r.Context(), countBound)
	if err != nil {
		return "", "", nil, err
	}
	minutes, err := s.client.Throughput(r.Context(), time.Hour)
	if err != nil {
		return "", "", nil, err
	}
	type row struct {
		Type   string
		Counts map[runtime.Status]int
		Oldest time.Time
		Paused bool
	}
	rows := map[string]*row{}
	for _, c := range st.Counts {
		rw := rows[c.Type]
		if rw == nil {
			rw = &row{Type: c.Type, Counts: map[runtime.Status]int{}}
			rows[c.Type] = rw
		}
		rw.Counts[c.Status] += c.Tasks
	}
	for t, at := range st.OldestQueued {
		if rw := rows[t]; rw != nil {
			rw.Oldest = at
		}
	}
	for t := range st.Paused {
		if rw := rows[t]; rw != nil {
			rw.Paused = true
		}
	}
	var list []*row
	var oldest *row
	now := time.Now()
	for _, t := range slices.Sorted(maps.Keys(rows)) {
		rw := rows[t]
		list = append(list, rw)
		if !rw.Oldest.IsZero() && !rw.Oldest.After(now) && (oldest == nil || rw.Oldest.Before(oldest.Oldest)) {
			oldest = rw
		}
	}
	return "overview", "Overview", map[string]any{
		"Types": list, "Statuses": runtime.AllStatuses, "Running": st.RunningByWorker, "Now": now,
		"Capped": st.Capped, "CountedAt": st.CountedAt, "Bound": countBound, "Oldest": oldest, "Chart": chartOf(minutes, now),
	}, nil
}

// taskFilter reads the tasks page's query.
func taskFilter(q url.Values) (runtime.Filter, error) {
	f := runtime.Filter{Type: q.Get("type"), Owner: q.Get("owner"), Key: q.Get("key"), ErrorContains: q.Get("error"), Limit: pageSize}
	if s := q.Get("status"); s != "" {
		f.Status = runtime.Status(strings.ToUpper(s))
		if !slices.Contains(runtime.AllStatuses, f.Status) {
			return f, fmt.Errorf("unknown status %q", s)
		}
	}
	if s := q.Get("before"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			return f, fmt.Errorf("bad page %q", s)
		}
		f.BeforeID = runtime.TaskID(n)
	}
	if s := q.Get("age"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return f, fmt.Errorf("bad age %q: write a duration such as 1h", s)
		}
		f.OlderThan = d
	}
	return f, nil
}

func (s *server) tasks(r *http.Request) (string, string, any, error) {
	q := r.URL.Query()
	data := map[string]any{"Query": q, "Statuses": runtime.AllStatuses, "MaxBulk": maxBulk, "MaxMatching": maxMatching, "FilterFields": filterFields}
	if id := q.Get("id"); id != "" {
		data["GoTo"] = id // the template links to it; a form of one field is not worth a redirect
	}
	f, err := taskFilter(q)
	if err != nil {
		data["Error"] = err.Error()
		return "tasks", "Tasks", data, nil
	}
	// Finished tasks of one status are listed the latest finished first,
	// the order of the index that holds them: newest first by id, a page
	// of failures older than most tasks would read past all the others.
	ff, finished := f.Finished()
	var list []runtime.TaskInfo
	if finished {
		if at := q.Get("before_at"); at != "" {
			if ff.BeforeFinishedAt, err = time.Parse(time.RFC3339Nano, at); err != nil {
				data["Error"] = fmt.Sprintf("bad page %q", at)
				return "tasks", "Tasks", data, nil
			}
		}
		list, err = s.client.ListFinished(r.Context(), ff)
	} else {
		list, err = s.client.List(r.Context(), f)
	}
	if err != nil {
		return "", "", nil, err
	}
	for i := range list {
		list[i].LastError = s.redactError(list[i], list[i].LastError)
	}
	data["Tasks"], data["LatestFinishedFirst"] = list, finished
	if len(list) == pageSize {
		next := url.Values{}
		for k, v := range q {
			next[k] = v
		}
		last := list[len(list)-1]
		next.Set("before", strconv.FormatInt(int64(last.ID), 10))
		if finished {
			next.Set("before_at", last.FinishedAt.UTC().Format(time.RFC3339Nano))
		}
		data["Next"] = template.URL(next.Encode()) // a query url.Values wrote: the template must not escape its = and &
	}
	return "tasks", "Tasks", data, nil
}

func (s *server) task(r *http.Request) (string, string, any, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return "", "", nil, runtime.ErrTaskNotFound
	}
	t, err := s.client.Get(r.Context(), runtime.TaskID(id))
	if err != nil {
		return "", "", nil, err
	}
	payload := t.Payload
	if s.opts.Redact != nil {
		payload = s.opts.Redact(t)
	}
	t.LastError = s.redactError(t, t.LastError)
	for i := range t.Attempts {
		t.Attempts[i].Error = s.redactError(t, t.Attempts[i].Error)
	}
	var pretty bytes.Buffer
	if json.Indent(&pretty, payload, "", "  ") != nil {
		pretty.Reset()
		pretty.Write(payload)
	}
	return "task", fmt.Sprintf("Task %d", id), map[string]any{
		"Task": t, "Payload": pretty.String(), "Now": time.Now(),
		"Retryable":   t.Status == runtime.StatusFailed || t.Status == runtime.StatusCancelled,
		"Cancellable": t.Status == runtime.StatusQueued || t.Status == runtime.StatusRunning,
	}, nil
}

func (s *server) workers(r *http.Request) (string, string, any, error) {
	live, err := s.client.Workers(r.Context())
	if err != nil {
		return "", "", nil, err
	}
	st, err := s.client.BoundedStats(r.Context(), countBound)
	if err != nil {
		return "", "", nil, err
	}
	return "workers", "Workers", map[string]any{"Workers": live, "Running": st.RunningByWorker, "Now": time.Now()}, nil
}

// keysShown bounds the keys page: the first keys by type and key.
const keysShown = 200

func (s *server) keys(r *http.Request) (string, string, any, error) {
	keys, err := s.client.Keys(r.Context(), keysShown)
	if err != nil {
		return "", "", nil, err
	}
	return "keys", "Concurrency keys", map[string]any{"Keys": keys, "Shown": keysShown}, nil
}

func (s *server) types(r *http.Request) (string, string, any, error) {
	st, err := s.client.BoundedStats(r.Context(), countBound)
	if err != nil {
		return "", "", nil, err
	}
	live, err := s.client.Workers(r.Context())
	if err != nil {
		return "", "", nil, err
	}
	type row struct {
		Type                        string
		Queued, Running             int
		QueuedCapped, RunningCapped bool
		Oldest                      time.Time
		Limit                       int
		Handlers                    int
		Paused                      bool
	}
	rows := map[string]*row{}
	get := func(t string) *row {
		if rows[t] == nil {
			rows[t] = &row{Type: t}
		}
		return rows[t]
	}
	for _, c := range st.Counts {
		switch c.Status {
		case runtime.StatusQueued:
			get(c.Type).Queued += c.Tasks
		case runtime.StatusRunning, runtime.StatusCancelRequested:
			get(c.Type).Running += c.Tasks
		default:
			get(c.Type)
		}
	}
	for _, w := range live {
		for t, limit := range w.TaskLimits {
			rw := get(t)
			rw.Handlers++
			rw.Limit = cmp.Or(rw.Limit, limit)
		}
	}
	for t, at := range st.OldestQueued {
		get(t).Oldest = at
	}
	for t := range st.Paused {
		get(t).Paused = true
	}
	var list []*row
	for _, t := range slices.Sorted(maps.Keys(rows)) {
		rw := rows[t]
		rw.QueuedCapped = st.Capped[runtime.StatusQueued]
		rw.RunningCapped = st.Capped[runtime.StatusRunning] || st.Capped[runtime.StatusCancelRequested]
		list = append(list, rw)
	}
	return "types", "Task types", map[string]any{
		"Types": list, "Now": time.Now(), "Capped": st.Capped, "CountedAt": st.CountedAt, "Bound": countBound,
	}, nil
}

func (s *server) schedules(r *http.Request) (string, string, any, error) {
	list, err := s.client.Schedules(r.Context())
	if err != nil {
		return "", "", nil, err
	}
	return "schedules", "Schedules", map[string]any{"Schedules": list}, nil
}

// funcs are the templates' helpers.
var funcs = template.FuncMap{
	"stamp": stamp,
	"zoned": zoned,
	"ago": func(now, t time.Time) string {
		switch {
		case t.IsZero():
			return "-"
		case t.After(now): // the oldest queued task is delayed: none is due yet
			return "none due (next in " + t.Sub(now).Round(time.Second).String() + ")"
		}
		return now.Sub(t).Round(time.Second).String()
	},
	"until": func(now, t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.Sub(now).Round(100 * time.Millisecond).String()
	},
	"count":   func(m map[runtime.Status]int, s runtime.Status) int { return m[s] },
	"bounded": bounded,
	"actionsOf": func(paused bool) []string {
		if paused {
			return []string{"resume", "trigger"}
		}
		return []string{"pause", "trigger"}
	},
	"lower": func(s runtime.Status) string { return strings.ToLower(string(s)) },
	"dur":   duration,
	"first": func(s string) string {
		line, _, _ := strings.Cut(s, "\n")
		if len(line) > 120 {
			line = line[:120] + "…"
		}
		return line
	},
}

// bounded is a count as a page shows it: n when exact; for a status with
// more tasks than a page counts live (capped), ≈n from the workers' count
// read at countedAt, or n+ (a lower bound) when none is stored.
func bounded(n int, capped bool, countedAt time.Time) string {
	switch {
	case !capped:
		return strconv.Itoa(n)
	case countedAt.IsZero():
		return strconv.Itoa(n) + "+"
	}
	return "≈" + strconv.Itoa(n)
}

// redactedError stands for an error text that Redact hides.
const redactedError = "(hidden: Options.Redact is set; Options.RedactError says what to show)"

// redactError is the error text to show for t: RedactError's, else
// hidden when Redact is set, else as stored.
func (s *server) redactError(t runtime.TaskInfo, text string) string {
	switch {
	case text == "":
		return ""
	case s.opts.RedactError != nil:
		return s.opts.RedactError(t, text)
	case s.opts.Redact != nil:
		return redactedError
	}
	return text
}

// stamp shows an instant in UTC, saying so.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05.000") + " UTC"
}

// zoned is stamp for an instant of schedule spec, followed, for a cron
// schedule in another zone, by its local time there: the time the
// schedule was written in.
func zoned(t time.Time, spec string) string {
	fields := strings.Fields(spec)
	if t.IsZero() || len(fields) < 2 || fields[0] != "cron" {
		return stamp(t)
	}
	loc, err := time.LoadLocation(fields[len(fields)-1])
	if err != nil || loc == time.UTC {
		return stamp(t)
	}
	return stamp(t) + " (" + t.In(loc).Format("2006-01-02 15:04 MST") + ", " + loc.String() + ")"
}

// duration rounds d to milliseconds, or to microseconds below one: an
// attempt that failed at once reads 48µs, not 0s.
func duration(d time.Duration) string {
	if d < time.Millisecond {
		return d.Round(time.Microsecond).String()
	}
	return d.Round(time.Millisecond).String()
}
