package ui

import (
	"context"
	"crypto/subtle"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/leasegen/leasegen/runtime"
)

// actionFunc runs a write and returns where to go next and what to say.
type actionFunc func(w http.ResponseWriter, r *http.Request, a Access) (redirect, flash string, err error)

// action serves a POST: the user may write, and the form carries the
// request's CSRF token; the outcome is logged with the user and shown on
// the page the action redirects to.
func (s *server) action(fn actionFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		a, err := s.access(r)
		if err != nil {
			http.Error(w, "forbidden: "+err.Error(), http.StatusForbidden)
			return
		}
		if !a.Write {
			http.Error(w, "forbidden: this UI is read-only for "+a.User, http.StatusForbidden)
			return
		}
		c, err := r.Cookie(csrfCookie)
		if err != nil || r.ParseForm() != nil || subtle.ConstantTimeCompare([]byte(c.Value), []byte(r.PostFormValue("csrf"))) != 1 {
			http.Error(w, "forbidden: missing or stale form token; reload the page and try again", http.StatusForbidden)
			return
		}
		redirect, flash, err := fn(w, r, a)
		if err != nil {
			flash = "failed: " + err.Error()
		}
		if redirect == "" {
			return // fn rendered a page
		}
		sep := "?"
		if strings.Contains(redirect, "?") {
			sep = "&"
		}
		http.Redirect(w, r, s.opts.Prefix+redirect+sep+s.flash.query(flash), http.StatusSeeOther)
	}
}

// log records an action.
func (s *server) log(a Access, action string, args ...any) {
	s.opts.Logger.Info("leasegen ui: "+action, append([]any{"user", a.User}, args...)...)
}

func (s *server) taskAction(_ http.ResponseWriter, r *http.Request, a Access) (string, string, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return "/tasks", "", fmt.Errorf("bad task id %q", r.PathValue("id"))
	}
	back := fmt.Sprintf("/tasks/%d", id)
	action := r.PathValue("action")
	if err := s.apply(r, action, runtime.TaskID(id)); err != nil {
		s.log(a, action+" failed", "task_id", id, "err", err)
		return back, "", err
	}
	s.log(a, action, "task_id", id)
	return back, fmt.Sprintf("%s: task %d", action, id), nil
}

// apply runs one task action through the client's fenced methods.
func (s *server) apply(r *http.Request, action string, id runtime.TaskID) error {
	switch action {
	case "retry":
		return s.client.Retry(r.Context(), id)
	case "cancel":
		return s.client.Cancel(r.Context(), id)
	}
	return fmt.Errorf("unknown action %q", action)
}

// bulk retries or cancels the selected tasks, at most maxBulk: the first
// post shows what it would do, and a second, with confirm=yes, does it.
func (s *server) bulk(w http.ResponseWriter, r *http.Request, a Access) (string, string, error) {
	action := r.PostFormValue("action")
	var ids []runtime.TaskID
	for _, v := range r.PostForm["id"] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return "/tasks", "", fmt.Errorf("bad task id %q", v)
		}
		ids = append(ids, runtime.TaskID(n))
	}
	switch {
	case action != "retry" && action != "cancel":
		return "/tasks", "", fmt.Errorf("unknown action %q", action)
	case len(ids) == 0:
		return "/tasks", "", fmt.Errorf("no task selected")
	case len(ids) > maxBulk:
		return "/tasks", "", fmt.Errorf("%d tasks selected; at most %d at a time", len(ids), maxBulk)
	}
	if r.PostFormValue("confirm") != "yes" {
		s.render(w, r, "confirm", view{Base: s.opts.Prefix, Title: "Confirm", Access: a, CSRF: r.PostFormValue("csrf"),
			Data: map[string]any{"Action": action, "IDs": ids}})
		return "", "", nil
	}
	done, failed := 0, 0
	for _, id := range ids {
		if err := s.apply(r, action, id); err != nil {
			failed++
			s.log(a, action+" failed", "task_id", int64(id), "err", err)
			continue
		}
		done++
		s.log(a, action, "task_id", int64(id), "bulk", true)
	}
	return "/tasks", fmt.Sprintf("%s: %d tasks done, %d refused", action, done, failed), nil
}

// matching retries, cancels or discards every task the posted filter matches, at
// most maxMatching, newest first: the first post counts them and asks, a
// second, with confirm=yes, does it.
func (s *server) matching(w http.ResponseWriter, r *http.Request, a Access) (string, string, error) {
	action := r.PostFormValue("action")
	query := url.Values{}
	for _, k := range filterFields {
		if v := r.PostFormValue(k); v != "" {
			query.Set(k, v)
		}
	}
	back := "/tasks?" + query.Encode()
	f, err := taskFilter(query)
	if err != nil {
		return back, "", err
	}
	var act func(context.Context, runtime.Filter, int) (int, error)
	switch action {
	case "retry":
		act = s.client.RetryMatching
	case "cancel":
		act = s.client.CancelMatching
	case "discard":
		act = s.client.DiscardMatching
	default:
		return back, "", fmt.Errorf("unknown action %q", action)
	}
	if r.PostFormValue("confirm") != "yes" {
		n, err := s.client.CountMatching(r.Context(), f, maxMatching+1)
		if err != nil {
			return back, "", err
		}
		s.render(w, r, "confirm-matching", view{Base: s.opts.Prefix, Title: "Confirm", Access: a, CSRF: r.PostFormValue("csrf"),
			Data: map[string]any{"Action": action, "Count": min(n, maxMatching), "More": n > maxMatching, "Filter": query, "Back": back}})
		return "", "", nil
	}
	done, err := act(r.Context(), f, maxMatching)
	s.log(a, action+" matching", "filter", query.Encode(), "tasks", done, "err", err)
	if err != nil {
		return back, "", fmt.Errorf("%s stopped after %d tasks: %w", action, done, err)
	}
	return back, fmt.Sprintf("%s: %d tasks matching the filter", action, done), nil
}

// filterFields are the tasks page's filter fields an action by filter
// carries.
var filterFields = []string{"status", "type", "owner", "key", "error", "age"}

func (s *server) typeAction(_ http.ResponseWriter, r *http.Request, a Access) (string, string, error) {
	typ, action := r.PathValue("type"), r.PathValue("action")
	var err error
	switch action {
	case "pause":
		err = s.client.Pause(r.Context(), typ)
	case "resume":
		err = s.client.Resume(r.Context(), typ)
	default:
		err = fmt.Errorf("unknown action %q", action)
	}
	if err != nil {
		s.log(a, action+" failed", "type", typ, "err", err)
		return "/types", "", err
	}
	s.log(a, action, "type", typ)
	return "/types", fmt.Sprintf("%s: %s", action, typ), nil
}

func (s *server) scheduleAction(_ http.ResponseWriter, r *http.Request, a Access) (string, string, error) {
	name, action := r.PathValue("name"), r.PathValue("action")
	var err error
	flash := fmt.Sprintf("%s: schedule %s", action, name)
	switch action {
	case "pause":
		err = s.client.PauseSchedule(r.Context(), name)
	case "resume":
		err = s.client.ResumeSchedule(r.Context(), name)
	case "trigger":
		var id runtime.TaskID
		if id, err = s.client.TriggerSchedule(r.Context(), name); err == nil {
			flash = fmt.Sprintf("trigger: schedule %s enqueued task %d", name, id)
		}
	default:
		err = fmt.Errorf("unknown action %q", action)
	}
	if err != nil {
		s.log(a, action+" failed", "schedule", name, "err", err)
		return "/schedules", "", err
	}
	s.log(a, action, "schedule", name)
	return "/schedules", flash, nil
}
