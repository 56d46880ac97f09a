package placeholder

import "testing"

func TestRewrite(t *testing.T) {
	got := Rewrite("SELECT a FROM t WHERE b = ? AND c IN (?, ?)", Dollar)
	if want := "SELECT a FROM t WHERE b = $1 AND c IN ($2, $3)"; got != want {
		t.Errorf("Rewrite = %q, want %q", got, want)
	}
}
