package runtime

import (
	"context"
	"testing"
	"time"

	"github.com/leasegen/leasegen/internal/dbtest"
)

// benchSetup is setup for benchmarks: a migrated engine on a fresh database.
func benchSetup(b *testing.B) (*Engine, *Client) {
	b.Helper()
	db := dbtest.New(b)
	engine := MySQL(db.DB)
	dbtest.Must(b, "migrate", engine.Migrate(context.Background()))
	client, err := NewClient(engine, ClientConfig{})
	dbtest.Must(b, "client", err)
	return engine, client
}

func benchEnqueue(b *testing.B, client *Client, n int) {
	b.Helper()
	reqs := make([]Request, n)
	for i := range reqs {
		reqs[i] = Request{Type: "bench", Payload: []byte(`{}`)}
	}
	_, err := client.EnqueueMany(context.Background(), reqs)
	dbtest.Must(b, "enqueue", err)
}

// BenchmarkClaim32 claims batches of 32 tasks; ns/op is per batch.
func BenchmarkClaim32(b *testing.B) {
	engine, client := benchSetup(b)
	req := claimRequest{Owner: "bench", Lease: time.Minute, Types: []string{"bench"}, Max: 32}
	for b.Loop() {
		b.StopTimer()
		benchEnqueue(b, client, 32)
		b.StartTimer()
		got, err := engine.store.claim(context.Background(), req)
		if err != nil || len(got) != 32 {
			b.Fatalf("claimed %d: %v", len(got), err)
		}
	}
}

// BenchmarkRenew100 renews 100 leases in one heartbeat; ns/op is per heartbeat.
func BenchmarkRenew100(b *testing.B) {
	engine, client := benchSetup(b)
	benchEnqueue(b, client, 100)
	claimed, err := engine.store.claim(context.Background(), claimRequest{Owner: "bench", Lease: time.Minute, Types: []string{"bench"}, Max: 100})
	dbtest.Must(b, "claim", err)
	refs := make([]leaseRef, len(claimed))
	for i, c := range claimed {
		refs[i] = leaseRef{ID: c.ID, Attempt: c.Attempt}
	}
	for b.Loop() {
		states, err := engine.store.renew(context.Background(), "bench", time.Minute, refs)
		if err != nil || !states[len(states)-1].Held {
			b.Fatalf("renew: %v", err)
		}
	}
}

// BenchmarkComplete runs one fenced completion per op.
func BenchmarkComplete(b *testing.B) {
	engine, client := benchSetup(b)
	benchEnqueue(b, client, b.N+1)
	claimed, err := engine.store.claim(context.Background(), claimRequest{Owner: "bench", Lease: time.Hour, Types: []string{"bench"}, Max: b.N + 1})
	dbtest.Must(b, "claim", err)
	b.ResetTimer()
	for _, c := range claimed[:b.N] {
		ok, err := engine.store.complete(context.Background(), engine.db, "bench", leaseRef{ID: c.ID, Attempt: c.Attempt}, "")
		if err != nil || !ok {
			b.Fatalf("complete: %v %v", ok, err)
		}
	}
}

// BenchmarkCompleteMany256 completes 256 executions with one grouped
// statement, as the worker's completion loop does under load; ns/op is per
// batch.
func BenchmarkCompleteMany256(b *testing.B) {
	engine, client := benchSetup(b)
	req := claimRequest{Owner: "bench", Lease: time.Hour, Types: []string{"bench"}, Max: 256}
	for b.Loop() {
		b.StopTimer()
		benchEnqueue(b, client, 256)
		claimed, err := engine.store.claim(context.Background(), req)
		dbtest.Must(b, "claim", err)
		reqs := make([]completionRequest, len(claimed))
		for i, c := range claimed {
			reqs[i] = completionRequest{Ref: leaseRef{ID: c.ID, Attempt: c.Attempt}}
		}
		b.StartTimer()
		oks, err := engine.store.completeMany(context.Background(), "bench", reqs)
		if err != nil || len(oks) != 256 || !oks[255] {
			b.Fatalf("complete many: %v", err)
		}
	}
}
