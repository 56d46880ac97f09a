// Package leaseotel traces leasegen tasks with OpenTelemetry: an enqueue
// is a producer span whose context travels in the tasks' metadata, and
// each execution is a consumer span in the same trace, with the task's id,
// type, attempt and outcome, recording the handler's error.
//
//	tracing := leaseotel.New(leaseotel.Config{})
//	client, _ := runtime.NewClient(engine, runtime.ClientConfig{
//		EnqueueMiddleware: []runtime.EnqueueMiddleware{tracing.EnqueueMiddleware()},
//	})
//	worker, _ := runtime.NewWorker(engine, runtime.Config{
//		Middleware: []runtime.Middleware{tracing.Middleware()},
//	})
//
// It is a module of its own, so that a service that does not trace never
// has OpenTelemetry in its module graph; package runtime imports none of
// it.
package leaseotel

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/leasegen/leasegen/runtime"
)

// Config configures the tracing. Zero fields take OpenTelemetry's globals.
type Config struct {
	// TracerProvider makes the tracer. Default otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
	// Propagator writes the trace context into a task's metadata and reads
	// it back. Default otel.GetTextMapPropagator(); when that propagates
	// nothing (OpenTelemetry's default), W3C trace context and baggage.
	Propagator propagation.TextMapPropagator
	// NewTrace starts each execution as the root of a trace of its own,
	// linked to the enqueue's span, instead of as its child: for tasks
	// that run long after their enqueue, or many times.
	NewTrace bool
}

// Tracing makes the middleware. It is safe for concurrent use.
type Tracing struct {
	tracer     trace.Tracer
	propagator propagation.TextMapPropagator
	newTrace   bool
}

// instrumentationName names the tracer, as OpenTelemetry asks.
const instrumentationName = "github.com/leasegen/leasegen/contrib/leaseotel"

// Attribute keys of the spans.
const (
	AttrTaskID      = attribute.Key("leasegen.task.id")
	AttrTaskType    = attribute.Key("leasegen.task.type")
	AttrAttempt     = attribute.Key("leasegen.task.attempt")
	AttrMaxAttempts = attribute.Key("leasegen.task.max_attempts")
	AttrOutcome     = attribute.Key("leasegen.outcome")
	AttrTasks       = attribute.Key("leasegen.tasks") // an enqueue's batch size
)

// New returns the tracing of cfg.
func New(cfg Config) *Tracing {
	tp := cfg.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	prop := cfg.Propagator
	if prop == nil {
		prop = otel.GetTextMapPropagator()
		if len(prop.Fields()) == 0 {
			prop = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
		}
	}
	return &Tracing{tracer: tp.Tracer(instrumentationName), propagator: prop, newTrace: cfg.NewTrace}
}

// EnqueueMiddleware traces each enqueue as a producer span, a child of
// the caller's context (an HTTP request's span, say), and writes that
// span's context into every task's metadata. The span records the ids or
// the enqueue's error.
func (tr *Tracing) EnqueueMiddleware() runtime.EnqueueMiddleware {
	return func(next runtime.EnqueueFunc) runtime.EnqueueFunc {
		return func(ctx context.Context, reqs []runtime.Request) ([]runtime.TaskID, error) {
			ctx, span := tr.tracer.Start(ctx, enqueueSpanName(reqs), trace.WithSpanKind(trace.SpanKindProducer),
				trace.WithAttributes(AttrTasks.Int(len(reqs))))
			defer span.End()
			if name := singleType(reqs); name != "" {
				span.SetAttributes(AttrTaskType.String(name))
			}
			carrier := propagation.MapCarrier{}
			tr.propagator.Inject(ctx, carrier)
			traced := make([]runtime.Request, len(reqs))
			for i, r := range reqs {
				r.Options = append(r.Options[:len(r.Options):len(r.Options)], runtime.WithMetadata(carrier))
				traced[i] = r
			}
			ids, err := next(ctx, traced)
			if err != nil {
				span.RecordError(err)
				span.SetStatus(codes.Error, err.Error())
				return ids, err
			}
			if len(ids) == 1 {
				span.SetAttributes(AttrTaskID.Int64(int64(ids[0])))
			}
			return ids, nil
		}
	}
}

// Middleware traces each execution as a consumer span, a child of the
// enqueue's span read from the task's metadata (or a new root linked to
// it, with Config.NewTrace), named "work TYPE". The handler's context
// carries the span. The span records the outcome, and the handler's error
// or panic; a panic goes on to the worker, which fails the task.
func (tr *Tracing) Middleware() runtime.Middleware {
	return func(next runtime.HandlerFunc) runtime.HandlerFunc {
		return func(ctx context.Context, task *runtime.Task) (err error) {
			enqueued := trace.SpanContextFromContext(tr.propagator.Extract(context.Background(), propagation.MapCarrier(task.Metadata)))
			opts := []trace.SpanStartOption{
				trace.WithSpanKind(trace.SpanKindConsumer),
				trace.WithAttributes(
					AttrTaskID.Int64(int64(task.ID)), AttrTaskType.String(task.Type),
					AttrAttempt.Int(task.Attempt), AttrMaxAttempts.Int(task.MaxAttempts),
				),
			}
			if enqueued.IsValid() {
				if tr.newTrace {
					opts = append(opts, trace.WithNewRoot(), trace.WithLinks(trace.Link{SpanContext: enqueued}))
				} else {
					ctx = trace.ContextWithRemoteSpanContext(ctx, enqueued)
				}
			}
			ctx, span := tr.tracer.Start(ctx, "work "+task.Type, opts...)
			defer func() {
				if r := recover(); r != nil {
					span.SetAttributes(AttrOutcome.String("panic"))
					span.SetStatus(codes.Error, "panic")
					span.End()
					panic(r)
				}
				span.SetAttributes(AttrOutcome.String(outcome(ctx, err)))
				if err != nil && !runtime.IsSnooze(err) {
					span.RecordError(err)
					span.SetStatus(codes.Error, err.Error())
				}
				span.End()
			}()
			return next(ctx, task)
		}
	}
}

// outcome names how the handler ended, as far as a middleware sees it:
// success, snoozed, permanent (no further attempt), an error that retries
// while attempts remain, or why the worker stopped the handler.
func outcome(ctx context.Context, err error) string {
	switch cause := context.Cause(ctx); {
	case err == nil:
		return "success"
	case runtime.IsSnooze(err):
		return "snoozed"
	case runtime.IsPermanent(err):
		return "permanent"
	case errors.Is(cause, runtime.ErrLeaseLost), errors.Is(cause, runtime.ErrLeaseExpiring):
		return "lease_lost"
	case errors.Is(cause, runtime.ErrCancelRequested):
		return "cancelled"
	case errors.Is(cause, runtime.ErrExecutionTimeout):
		return "timed_out"
	case errors.Is(cause, runtime.ErrWorkerStopping):
		return "stopping"
	default:
		return "error"
	}
}

// enqueueSpanName is "enqueue TYPE" when the batch has one type.
func enqueueSpanName(reqs []runtime.Request) string {
	if name := singleType(reqs); name != "" {
		return "enqueue " + name
	}
	return "enqueue"
}

// singleType is the one type of reqs, or "" when they have several.
func singleType(reqs []runtime.Request) string {
	if len(reqs) == 0 {
		return ""
	}
	for _, r := range reqs[1:] {
		if r.Type != reqs[0].Type {
			return ""
		}
	}
	return reqs[0].Type
}
