package dbtest

import (
	"os"
	"testing"

	"github.com/leasegen/leasegen/internal/nethost"
)

// RequireNetHosts skips t (fails it under CI=true) unless this process can
// make worker hosts in network namespaces: root with iproute2's ip.
func RequireNetHosts(t testing.TB) {
	t.Helper()
	why := nethost.Unavailable()
	if why == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("worker hosts in network namespaces: %s, and CI=true: the tests on them must run in CI", why)
	}
	t.Skipf("worker hosts in network namespaces skipped: %s (run `make test` as root)", why)
}

// NewNetHost makes a worker host for t (see nethost.Host), removed when t
// ends.
func NewNetHost(t testing.TB) *nethost.Host {
	t.Helper()
	RequireNetHosts(t)
	h, err := nethost.New()
	Must(t, "make a worker host", err)
	t.Cleanup(h.Close)
	return h
}
