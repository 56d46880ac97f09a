// Package gen is the leasegen code generator: it turns payload structs
// annotated with //leasegen:task into a typed task API on top of package
// runtime. The leasegen command (cmd/leasegen) is a thin wrapper around Main.
//
// # Annotating a payload
//
//	// ImportPayload imports one uploaded CSV file.
//	//
//	//leasegen:task name=import max_attempts=5 priority=10 timeout=5m idempotent
//	type ImportPayload struct {
//		RequestID string `json:"request_id" leasegen:"key"`   // idempotency key
//		TenantID  string `json:"tenant_id"  leasegen:"owner"` // owner id, for listings
//		FileURL   string `json:"file_url"`
//	}
//
// Options, all optional:
//
//	name=NAME        task type stored in the database (default: the type name
//	                 without a Payload suffix, in snake_case: SendEmailPayload -> send_email)
//	priority=N       default priority; higher runs first (default 0)
//	max_attempts=N   default attempts before the task fails (default: the client's, 5)
//	timeout=DUR      maximum execution time (runtime.WithTimeout)
//	lease=DUR        lease of this type's executions (runtime.WithLease)
//	backoff=DUR      first retry delay, doubling up to 10m (runtime.Exponential)
//	concurrency=N    running tasks of this type across all workers (runtime.WithConcurrency)
//	idempotent       the handler gets a *sql.Tx; its writes commit with the task's
//	                 fenced completion, and a second task with the same key skips its work
//	unique           enqueueing an existing key returns the existing task
//	result=T         the handler returns (T, error); T (a type of the package,
//	                 or a basic type) is stored as JSON with the completion and
//	                 read back typed by the generated Client.WaitX
//	key_concurrency=N  at most N tasks with the same concurrency key run at
//	                 once, across all workers (runtime.WithConcurrencyKey)
//	sequential       tasks with the same concurrency key run one at a time, in
//	                 enqueue order; sequential=block holds the key after a task
//	                 fails for good, until it is retried or discarded
//	                 (runtime.WithSequentialKey)
//	rate=N/DUR       at most N tasks of this type start in any window of DUR,
//	                 across all workers, on the database's clock (runtime.WithRate);
//	                 N at most 10,000, DUR whole milliseconds
//	key_rate=N/DUR   at most N tasks with the same concurrency key start in any
//	                 window of DUR (runtime.WithKeyRate); with key_concurrency or
//	                 sequential, both hold
//	fair             the type's claims are shared among its concurrency keys:
//	                 one key's backlog delays another key's first task by about
//	                 a claim batch (runtime.WithFairnessKey, weight 1; pass
//	                 WithFairnessKey with the same key at the enqueue for
//	                 another weight)
//
// A rule that another keeps from ever binding is refused: key_rate=N/DUR
// beside rate=M/DUR2 with N >= M and DUR <= DUR2, key_concurrency=N
// beside concurrency=M with N >= M, fair beside sequential or beside
// key_concurrency=N with N <= 100.
//
// A periodic task adds a schedule (one of cron and every), and the
// generated Register hands it to the worker (runtime.WithSchedule):
//
//	cron="EXPR"      five-field cron ("0 3 * * MON-FRI") or @daily, @hourly, ...
//	tz=ZONE          IANA zone of cron (default UTC), checked against the zone
//	                 database the generator embeds
//	every=DUR        at the multiples of DUR since the Unix epoch (at least 1s)
//	misfire=POLICY   ticks found over a minute late: skip, once (the default:
//	                 the latest of them) or backfill:N (the latest N)
//	overlap=POLICY   allow (the default), or skip a tick while the previous
//	                 tick's task is queued or running
//	payload='JSON'   each tick's payload (default {}); it must decode into the
//	                 payload type, unknown fields refused (checked here)
//
//	//leasegen:task name=nightly_report cron="0 3 * * *" tz=Europe/Berlin overlap=skip
//	type NightlyReportPayload struct{ Region string `json:"region"` }
//
// Field tags: leasegen:"key" marks the string field that is the idempotency
// key (needed by unique, used by idempotent); leasegen:"owner" marks the
// string field stored as the task's owner id; leasegen:"concurrency_key"
// marks the string field whose value groups tasks for key_concurrency,
// sequential, key_rate and fair (the field needs one of them, and each of
// them the field; sequential with key_concurrency is refused).
//
// Payloads are encoded as JSON. Fields must round-trip: nested structs,
// pointers, slices, arrays, maps with string or integer keys, embedded
// structs, types from other packages and types with MarshalJSON/UnmarshalJSON
// (or MarshalText/UnmarshalText, such as time.Time) are accepted; channels,
// functions, complex numbers, interfaces and structs whose fields are all
// unexported are rejected with their position.
//
// # Workflows
//
// //leasegen:workflow goes in the doc comment of a struct whose fields are
// the steps of a workflow: a field's name is the step's, its type (a
// struct declared in the package) the step's payload. The tag after:"A,B"
// names the steps it runs after; result:"T" what its handler returns
// (the rules of result=T); leasegen:"..." the step's options: priority,
// max_attempts, timeout, lease, backoff, concurrency and rate as in
// //leasegen:task, and run_on_parent_failure (the step runs once its
// parents ended, successful or not; its inputs are pointers, nil for a
// parent that did not succeed) or run_on_parent_failure=A,B (the same for
// the parents named only: the rule per edge). A field of type runtime.FanOut[T] is a
// fan-out: its one parent's handler returns []T, and a step of payload T
// runs per element; a step after the fan-out reads their results as a
// slice, in order. Parents that are not steps, a step after itself, a
// parent named twice, cycles, unexported or embedded fields, payloads of
// other types, options that do not apply to a step, and a fan-out with
// other than one parent, after a fan-out, on its parent's failure, or
// whose parent declares a result or feeds another, are refused with their
// position; so is a step after a fan-out's parent that does not name the
// fan-out.
//
//	//leasegen:workflow
//	type Settle struct {
//		Charge  ChargeInvoice `result:"ChargeID"`
//		Receipt SendReceipt   `after:"Charge" leasegen:"max_attempts=3"`
//	}
//
// For workflow W with step S it writes WorkflowW and TaskWS (each step is
// a task type of its own, "w.s"); WRun (the workflow's id and its steps'
// task ids, fan-outs aside); Client.EnqueueW and EnqueueWTx, which store
// every step in one transaction, and WaitW, which waits for all of them,
// spawned ones included; WSInputs, the results of S's parents that have a
// result type; WHandler, with HandleWS(ctx, t, p) or HandleWS(ctx, t, p,
// in WSInputs) per step (returning the fan-out's []T for a step that
// feeds one), embedded in Handlers; and RegisterW, which Register calls
// with each step's handler options.
//
// # What it writes
//
// One file per package, leasegen_gen.go, with, for each task X:
//
//   - TaskX, the task type's constant;
//   - on Client (NewClient(rt) over a *runtime.Client): EnqueueX,
//     EnqueueXTx (inside the caller's transaction), EnqueueXBatch and
//     EnqueueXBatchTx (atomic, one statement per 1,000 rows), each taking
//     runtime.EnqueueOption; Wait(ctx, id) for any task's outcome; and,
//     for a task with result=T, WaitX(ctx, id) returning its T;
//   - XHandler, the interface with HandleX(ctx, t, p) (and a *sql.Tx
//     argument for an idempotent task, whose writes commit with the
//     fenced completion), returning an error, or (T, error) with result=T;
//   - RegisterX(w, h), which hands the handler to a worker with the
//     annotation's options (timeout, lease, backoff, concurrency, the
//     schedule), for a worker dedicated to some types.
//
// and for the package an Enqueuer interface with every Enqueue method
// (for fakes in unit tests), Handlers embedding every XHandler, and
// Register(w, h), which registers them all, so that a missing handler is a
// compile error. The file is
// gofmt-clean, deterministic and rewritten only when it changes. Its
// //go:build !leasegen_generating line lets the generator load a package
// whose old generated file no longer compiles.
//
// # Running it
//
//	//go:generate go tool leasegen
//
// with, in the service's go.mod, a tool directive (go get -tool
// github.com/leasegen/leasegen/cmd/leasegen), or with leasegen installed by
// go install github.com/leasegen/leasegen/cmd/leasegen@latest and
// //go:generate leasegen. Flags: -check (write nothing; exit 1 with a diff
// when stale, for CI), -schema FILE (also render the schema SQL for your own
// migration tool from templates/schema.sql.tmpl), -schema-engine mysql|postgres|sqlite
// (the schema's database, default mysql), -alerts FILE (Prometheus alert rules
// for the package's task types, from templates/alerts.yml.tmpl), -dashboard
// FILE (a Grafana dashboard, from templates/dashboard.json.tmpl),
// -testhelpers (typed test assertions per task, in the package NAMEtest in
// the folder NAMEtest, over runtime/leasetest), -output NAME.
//
// Exit codes: 0 on success (silent), 1 for bad input (every problem printed
// as file:line:col: message; hint) or stale output, 2 for bad usage.
package gen
