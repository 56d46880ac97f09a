package gen

import (
	"fmt"
	"slices"
	"strings"
)

// diffContext is how many unchanged lines a hunk shows around a change.
const diffContext = 3

// edit is one line of an edit script: ' ' kept, '-' deleted, '+' inserted.
type edit struct {
	kind byte
	line string
}

// unifiedDiff returns the unified diff (as diff -u prints it) that turns
// a into b, or "" when they are equal.
func unifiedDiff(name string, a, b []string) string {
	edits := diffLines(a, b)
	var out strings.Builder
	// lineA and lineB are the 0-based lines of a and b that edits[i] is at.
	lineA, lineB := make([]int, len(edits)+1), make([]int, len(edits)+1)
	for i, e := range edits {
		lineA[i+1], lineB[i+1] = lineA[i], lineB[i]
		if e.kind != '+' {
			lineA[i+1]++
		}
		if e.kind != '-' {
			lineB[i+1]++
		}
	}
	for start := 0; start < len(edits); {
		first := slices.IndexFunc(edits[start:], func(e edit) bool { return e.kind != ' ' })
		if first < 0 {
			break
		}
		first += start
		// The hunk runs until the next change is more than two contexts away.
		last := first
		for i := first; i < len(edits) && i <= last+2*diffContext; i++ {
			if edits[i].kind != ' ' {
				last = i
			}
		}
		from, to := max(first-diffContext, 0), min(last+diffContext+1, len(edits))
		if out.Len() == 0 {
			fmt.Fprintf(&out, "--- a/%s\n+++ b/%s\n", name, name)
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(lineA[from], lineA[to]-lineA[from]), hunkRange(lineB[from], lineB[to]-lineB[from]))
		for _, e := range edits[from:to] {
			fmt.Fprintf(&out, "%c%s\n", e.kind, e.line)
		}
		start = to
	}
	return out.String()
}

// hunkRange is a hunk header's "start,count" (1-based; an empty range
// names the line before it).
func hunkRange(start, count int) string {
	if count == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if count == 1 {
		return fmt.Sprint(start + 1)
	}
	return fmt.Sprintf("%d,%d", start+1, count)
}

// diffLines is a shortest edit script from a to b (Myers' O(ND)
// algorithm): generated files differ little, so D stays small.
func diffLines(a, b []string) []edit {
	n, m := len(a), len(b)
	offset := n + m + 1
	v := make([]int, 2*offset+1)
	var trace [][]int
	for d := 0; d <= n+m; d++ {
		trace = append(trace, slices.Clone(v))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[offset+k-1] < v[offset+k+1]) {
				x = v[offset+k+1] // down: an insertion
			} else {
				x = v[offset+k-1] + 1 // right: a deletion
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[offset+k] = x
			if x >= n && y >= m {
				return backtrack(trace, a, b, offset)
			}
		}
	}
	return nil // not reached: d = n+m always ends the search
}

// backtrack walks the search's trace back from the end into the edits.
func backtrack(trace [][]int, a, b []string, offset int) []edit {
	x, y := len(a), len(b)
	var edits []edit
	for d := len(trace) - 1; d >= 0; d-- {
		v := trace[d]
		k := x - y
		prevK := k - 1
		if k == -d || (k != d && v[offset+k-1] < v[offset+k+1]) {
			prevK = k + 1
		}
		prevX := v[offset+prevK]
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			edits = append(edits, edit{' ', a[x-1]})
			x, y = x-1, y-1
		}
		if d == 0 {
			break
		}
		if x == prevX {
			edits = append(edits, edit{'+', b[y-1]})
			y--
		} else {
			edits = append(edits, edit{'-', a[x-1]})
			x--
		}
	}
	slices.Reverse(edits)
	return edits
}
