package gen

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestUnifiedDiff(t *testing.T) {
	a := strings.Split("a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm", "\n")
	b := strings.Split("a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\nn", "\n")
	want := `--- a/x.go
+++ b/x.go
@@ -1,5 +1,5 @@
 a
-b
+B
 c
 d
 e
@@ -11,3 +11,4 @@
 k
 l
 m
+n
`
	if diff := cmp.Diff(want, unifiedDiff("x.go", a, b)); diff != "" {
		t.Errorf("unified diff (-want +got):\n%s", diff)
	}
	if got := unifiedDiff("x.go", a, a); got != "" {
		t.Errorf("diff of equal files: %q, want none", got)
	}
}

// Every edit script keeps exactly a's lines in order and inserts exactly
// b's: applying it to a gives b.
func TestDiffLinesRebuildsBothSides(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	random := func() []string {
		lines := make([]string, r.IntN(30))
		for i := range lines {
			lines[i] = string(rune('a' + r.IntN(4)))
		}
		return lines
	}
	for range 500 {
		a, b := random(), random()
		var gotA, gotB []string
		for _, e := range diffLines(a, b) {
			if e.kind != '+' {
				gotA = append(gotA, e.line)
			}
			if e.kind != '-' {
				gotB = append(gotB, e.line)
			}
		}
		if strings.Join(a, "\n") != strings.Join(gotA, "\n") || strings.Join(b, "\n") != strings.Join(gotB, "\n") {
			t.Fatalf("diff of %q and %q rebuilds %q and %q", a, b, gotA, gotB)
		}
	}
}
