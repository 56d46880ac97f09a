package driver

import (
	"slices"
	"testing"
)

// A claim locks the scopes of its limits in one order, whatever the order
// of its types, so that two claims never wait on each other's scopes.
func TestLimitScopesAreSorted(t *testing.T) {
	got := ClaimRequest{Types: []string{"b", "a", "c"}, TypeLimits: map[string]int{"c": 1, "a": 1}, GlobalLimit: 3}.LimitScopes()
	if !slices.Equal(got, []string{GlobalScope, "a", "c"}) {
		t.Errorf("LimitScopes = %v", got)
	}
}
