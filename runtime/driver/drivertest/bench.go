package drivertest

import (
	"context"
	"testing"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
)

// The hot paths, one statement group each, on both engines: ns/op is per
// call and ns/task per task of the batch. `make bench` runs them;
// `make bench-smoke` (in CI) runs each once.

// benchBatch is the batch of the claim and completion benchmarks: what a
// worker with 1,000 free slots claims and completes at saturation.
const benchBatch = 1000

// queueBench enqueues n tasks of type "bench".
func queueBench(b *testing.B, bundle *Bundle, n int) {
	b.Helper()
	tasks := make([]driver.NewTask, n)
	for i := range tasks {
		tasks[i] = driver.NewTask{Type: "bench"}
	}
	bundle.Insert(b, tasks...)
}

// claimBench claims up to n tasks for owner "bench".
func claimBench(b *testing.B, bundle *Bundle, n int, lease time.Duration) []driver.ClaimedTask {
	b.Helper()
	got, err := bundle.Driver.Claim(context.Background(), driver.ClaimRequest{Owner: "bench", Lease: lease, Types: []string{"bench"}, Max: n})
	if err != nil || len(got) != n {
		b.Fatalf("claimed %d of %d: %v", len(got), n, err)
	}
	return got
}

func perTask(b *testing.B, tasks int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tasks), "ns/task")
}

// benchClaim claims batches of 1,000 queued tasks: one transaction of
// a locking read and one UPDATE.
func benchClaim(b *testing.B, bundle *Bundle) {
	for b.Loop() {
		b.StopTimer()
		queueBench(b, bundle, benchBatch)
		b.StartTimer()
		claimBench(b, bundle, benchBatch, time.Minute)
	}
	perTask(b, benchBatch)
}

// benchRenew renews 1,000 leases with one heartbeat.
func benchRenew(b *testing.B, bundle *Bundle) {
	queueBench(b, bundle, benchBatch)
	refs := refsOf(claimBench(b, bundle, benchBatch, time.Minute))
	for b.Loop() {
		states, err := bundle.Driver.Renew(context.Background(), "bench", time.Minute, refs)
		if err != nil || !states[len(states)-1].Held {
			b.Fatalf("renew: %v", err)
		}
	}
	perTask(b, benchBatch)
}

// benchCompleteMany completes 1,000 executions with one grouped,
// fenced statement, as the completion loop does at saturation.
func benchCompleteMany(b *testing.B, bundle *Bundle) {
	for b.Loop() {
		b.StopTimer()
		queueBench(b, bundle, benchBatch)
		refs := refsOf(claimBench(b, bundle, benchBatch, time.Hour))
		reqs := make([]driver.CompletionRequest, len(refs))
		for i, ref := range refs {
			reqs[i] = driver.CompletionRequest{Ref: ref}
		}
		b.StartTimer()
		oks, err := bundle.Driver.CompleteMany(context.Background(), "bench", reqs)
		if err != nil || !oks[len(oks)-1] {
			b.Fatalf("complete many: %v", err)
		}
	}
	perTask(b, benchBatch)
}

// benchComplete runs one fenced completion per op: the path of a
// handler's CompleteTx, or of a worker with one task at a time.
func benchComplete(b *testing.B, bundle *Bundle) {
	const tasks = 2000
	queueBench(b, bundle, tasks)
	refs := refsOf(claimBench(b, bundle, tasks, time.Hour))
	i := 0
	for b.Loop() {
		if i == len(refs) {
			b.StopTimer()
			queueBench(b, bundle, tasks)
			refs, i = refsOf(claimBench(b, bundle, tasks, time.Hour)), 0
			b.StartTimer()
		}
		ok, err := bundle.Driver.Complete(context.Background(), bundle.DB.DB, "bench", refs[i], "")
		if err != nil || !ok {
			b.Fatalf("complete: %v %v", ok, err)
		}
		i++
	}
}

// benchEnqueueMany inserts batches of 1,000 tasks: what a service's bulk
// enqueue costs the driver, in one transaction a batch.
func benchEnqueueMany(b *testing.B, bundle *Bundle) {
	tasks := make([]driver.NewTask, benchBatch)
	for i := range tasks {
		tasks[i] = driver.NewTask{Type: "bench", Payload: []byte(`{}`), MaxAttempts: 5}
	}
	for b.Loop() {
		ids, err := bundle.Driver.Insert(context.Background(), bundle.DB.DB, tasks)
		if err != nil || len(ids) != benchBatch {
			b.Fatalf("enqueued %d of %d: %v", len(ids), benchBatch, err)
		}
	}
	perTask(b, benchBatch)
}

func refsOf(claimed []driver.ClaimedTask) []driver.LeaseRef {
	refs := make([]driver.LeaseRef, len(claimed))
	for i, c := range claimed {
		refs[i] = driver.LeaseRef{ID: c.ID, Attempt: c.Attempt}
	}
	return refs
}

// Benchmark runs the hot paths' benchmarks on h, each on a migrated engine
// of a fresh database.
func Benchmark(b *testing.B, h *Harness) {
	for _, bench := range []struct {
		name string
		run  func(*testing.B, *Bundle)
	}{
		{"Claim", benchClaim},
		{"Renew", benchRenew},
		{"CompleteMany", benchCompleteMany},
		{"Complete", benchComplete},
		{"EnqueueMany", benchEnqueueMany},
	} {
		b.Run(bench.name, func(b *testing.B) { bench.run(b, Setup(b, h)) })
	}
}
