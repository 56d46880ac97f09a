package leaseotel_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/leasegen/leasegen/contrib/leaseotel"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/leasetest/sqlitetest"
)

// rig is an engine whose client and worker trace into an in-memory
// exporter.
type rig struct {
	provider *sdktrace.TracerProvider
	spans    *tracetest.InMemoryExporter
	engine   *runtime.Engine
	client   *runtime.Client
	tracing  *leaseotel.Tracing
}

func newRig(t *testing.T, cfg leaseotel.Config) *rig {
	t.Helper()
	r := &rig{spans: tracetest.NewInMemoryExporter()}
	r.provider = sdktrace.NewTracerProvider(sdktrace.WithSyncer(r.spans))
	t.Cleanup(func() { _ = r.provider.Shutdown(context.Background()) })
	cfg.TracerProvider = r.provider
	r.tracing = leaseotel.New(cfg)
	r.engine, _ = sqlitetest.NewEngine(t)
	client, err := runtime.NewClient(r.engine, runtime.ClientConfig{
		EnqueueMiddleware: []runtime.EnqueueMiddleware{r.tracing.EnqueueMiddleware()},
	})
	if err != nil {
		t.Fatal(err)
	}
	r.client = client
	return r
}

// workOne runs one due task through a worker with the tracing middleware.
func (r *rig) workOne(t *testing.T, taskType string, fn runtime.HandlerFunc) runtime.TaskInfo {
	t.Helper()
	w, err := runtime.NewWorker(r.engine, runtime.Config{
		Middleware: []runtime.Middleware{r.tracing.Middleware()},
		Logger:     slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Handle(taskType, fn, runtime.WithBackoff(func(int) time.Duration { return 0 })); err != nil {
		t.Fatal(err)
	}
	info, err := w.WorkOne(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// span returns the one ended span named name.
func (r *rig) span(t *testing.T, name string) tracetest.SpanStub {
	t.Helper()
	var found []tracetest.SpanStub
	for _, s := range r.spans.GetSpans() {
		if s.Name == name {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d spans named %q, want 1; all: %v", len(found), name, names(r.spans.GetSpans()))
	}
	return found[0]
}

func names(spans tracetest.SpanStubs) []string {
	out := make([]string, len(spans))
	for i, s := range spans {
		out[i] = s.Name
	}
	return out
}

func attr(s tracetest.SpanStub, key attribute.Key) attribute.Value {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value
		}
	}
	return attribute.Value{}
}

// One trace spans the HTTP request that enqueues, the enqueue and the
// handler: the enqueue is the request's child, the execution the
// enqueue's, and the handler's context carries the execution's span.
func TestTraceSpansRequestEnqueueAndHandler(t *testing.T) {
	r := newRig(t, leaseotel.Config{})
	var id runtime.TaskID
	api := otelhttp.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var err error
		id, err = r.client.Enqueue(req.Context(), "import", []byte(`{"file":"a.csv"}`), runtime.WithMetadata(map[string]string{"request_id": "r-1"}))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	}), "imports", otelhttp.WithTracerProvider(r.provider),
		otelhttp.WithSpanNameFormatter(func(_ string, req *http.Request) string { return req.Method + " " + req.URL.Path }))
	server := httptest.NewServer(api)
	defer server.Close()
	resp, err := http.Post(server.URL+"/imports", "application/json", nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /imports: %v %v", resp, err)
	}
	resp.Body.Close()

	var inHandler trace.SpanContext
	info := r.workOne(t, "import", func(ctx context.Context, task *runtime.Task) error {
		inHandler = trace.SpanContextFromContext(ctx)
		if task.Metadata["request_id"] != "r-1" || task.Metadata["traceparent"] == "" {
			t.Errorf("the handler's metadata = %v, want the caller's request_id and the trace context", task.Metadata)
		}
		return nil
	})
	if info.ID != id || info.Status != runtime.StatusSuccess {
		t.Fatalf("worked %+v, want task %d SUCCESS", info, id)
	}

	request, enqueue, work := r.span(t, "POST /imports"), r.span(t, "enqueue import"), r.span(t, "work import")
	traceID := request.SpanContext.TraceID()
	for _, s := range []tracetest.SpanStub{enqueue, work} {
		if s.SpanContext.TraceID() != traceID {
			t.Errorf("span %q is in trace %s, want the request's %s", s.Name, s.SpanContext.TraceID(), traceID)
		}
	}
	if enqueue.Parent.SpanID() != request.SpanContext.SpanID() || enqueue.SpanKind != trace.SpanKindProducer {
		t.Errorf("enqueue span: parent %s kind %s, want the request's span %s, producer", enqueue.Parent.SpanID(), enqueue.SpanKind, request.SpanContext.SpanID())
	}
	if work.Parent.SpanID() != enqueue.SpanContext.SpanID() || !work.Parent.IsRemote() || work.SpanKind != trace.SpanKindConsumer {
		t.Errorf("work span: parent %v kind %s, want the enqueue's span, remote, consumer", work.Parent, work.SpanKind)
	}
	if inHandler.SpanID() != work.SpanContext.SpanID() {
		t.Errorf("the handler's context holds span %s, want the work span %s", inHandler.SpanID(), work.SpanContext.SpanID())
	}
	for key, want := range map[attribute.Key]string{
		leaseotel.AttrTaskID: strconv.FormatInt(int64(id), 10), leaseotel.AttrTaskType: "import",
		leaseotel.AttrAttempt: "1", leaseotel.AttrMaxAttempts: "5", leaseotel.AttrOutcome: "success",
	} {
		if got := attr(work, key).String(); got != want {
			t.Errorf("work span %s = %q, want %q", key, got, want)
		}
	}
	if got := attr(enqueue, leaseotel.AttrTaskID).String(); got != strconv.FormatInt(int64(id), 10) {
		t.Errorf("enqueue span %s = %q, want %d", leaseotel.AttrTaskID, got, id)
	}
	if work.Status.Code != codes.Unset {
		t.Errorf("a successful execution's span has status %v", work.Status)
	}
}

// Every attempt is a span with its attempt number and outcome; an error
// is recorded on its attempt's span; a snooze is not an error.
func TestAttemptsAndOutcomes(t *testing.T) {
	r := newRig(t, leaseotel.Config{})
	if _, err := r.client.Enqueue(context.Background(), "flaky", nil, runtime.WithMaxAttempts(3)); err != nil {
		t.Fatal(err)
	}
	handlers := []runtime.HandlerFunc{
		func(context.Context, *runtime.Task) error { return runtime.Snooze(0) },
		func(context.Context, *runtime.Task) error { return errors.New("disk full") },
		func(context.Context, *runtime.Task) error { return runtime.Permanent(errors.New("bad file")) },
	}
	for _, h := range handlers {
		r.workOne(t, "flaky", h)
	}
	spans := r.spans.GetSpans()
	var works []tracetest.SpanStub
	for _, s := range spans {
		if s.Name == "work flaky" {
			works = append(works, s)
		}
	}
	if len(works) != 3 {
		t.Fatalf("%d work spans, want 3: %v", len(works), names(spans))
	}
	want := []struct {
		attempt, outcome string
		status           codes.Code
		exception        bool
	}{
		{"1", "snoozed", codes.Unset, false},
		{"2", "error", codes.Error, true},
		{"3", "permanent", codes.Error, true},
	}
	for i, w := range want {
		s := works[i]
		hasException := len(s.Events) > 0 && s.Events[0].Name == "exception"
		if attr(s, leaseotel.AttrAttempt).String() != w.attempt || attr(s, leaseotel.AttrOutcome).String() != w.outcome || s.Status.Code != w.status || hasException != w.exception {
			t.Errorf("span %d: attempt %s outcome %s status %v exception %v; want attempt %s outcome %s status %v exception %v",
				i, attr(s, leaseotel.AttrAttempt).String(), attr(s, leaseotel.AttrOutcome).String(), s.Status.Code, hasException,
				w.attempt, w.outcome, w.status, w.exception)
		}
	}
}

// A panicking handler's span ends with the outcome panic, and the worker
// still fails the task with the panic's stack.
func TestPanicEndsSpanAndFailsTask(t *testing.T) {
	r := newRig(t, leaseotel.Config{})
	if _, err := r.client.Enqueue(context.Background(), "boom", nil, runtime.WithMaxAttempts(1)); err != nil {
		t.Fatal(err)
	}
	info := r.workOne(t, "boom", func(context.Context, *runtime.Task) error { panic("nil map") })
	if info.Status != runtime.StatusFailed {
		t.Errorf("task after a panic is %s, want FAILED", info.Status)
	}
	s := r.span(t, "work boom")
	if attr(s, leaseotel.AttrOutcome).String() != "panic" || s.Status.Code != codes.Error {
		t.Errorf("span of a panic: outcome %q status %v", attr(s, leaseotel.AttrOutcome).String(), s.Status)
	}
}

// With NewTrace an execution roots a trace of its own, linked to the
// enqueue's span.
func TestNewTraceLinksToEnqueue(t *testing.T) {
	r := newRig(t, leaseotel.Config{NewTrace: true})
	if _, err := r.client.Enqueue(context.Background(), "report", nil); err != nil {
		t.Fatal(err)
	}
	r.workOne(t, "report", func(context.Context, *runtime.Task) error { return nil })
	enqueue, work := r.span(t, "enqueue report"), r.span(t, "work report")
	if work.SpanContext.TraceID() == enqueue.SpanContext.TraceID() || work.Parent.IsValid() {
		t.Errorf("work span in trace %s with parent %v, want a new root", work.SpanContext.TraceID(), work.Parent)
	}
	if len(work.Links) != 1 || work.Links[0].SpanContext.SpanID() != enqueue.SpanContext.SpanID() {
		t.Errorf("work span links %v, want the enqueue's span %s", work.Links, enqueue.SpanContext.SpanID())
	}
}

// Enqueues in a transaction and in batches are traced too; a refused
// enqueue's span records the error.
func TestEnqueueSpans(t *testing.T) {
	r := newRig(t, leaseotel.Config{})
	ctx := context.Background()
	tx, err := r.engine.DB().Begin()
	if err != nil {
		t.Fatal(err)
	}
	id, err := r.client.EnqueueTx(ctx, tx, "a", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if info, _ := r.client.Get(ctx, id); info.Metadata["traceparent"] == "" {
		t.Errorf("a task enqueued in a transaction has metadata %v, want a trace context", info.Metadata)
	}
	if _, err := r.client.EnqueueMany(ctx, []runtime.Request{{Type: "a"}, {Type: "b"}}); err != nil {
		t.Fatal(err)
	}
	if got := attr(r.span(t, "enqueue"), leaseotel.AttrTasks).String(); got != "2" {
		t.Errorf("a batch's span counts %s tasks, want 2", got)
	}
	if _, err := r.client.Enqueue(ctx, "bad type", nil); !errors.Is(err, runtime.ErrInvalidTask) {
		t.Fatalf("enqueue of a bad type: %v", err)
	}
	if s := r.span(t, "enqueue bad type"); s.Status.Code != codes.Error || len(s.Events) == 0 {
		t.Errorf("a refused enqueue's span: status %v, %d events; want the error recorded", s.Status, len(s.Events))
	}
}
