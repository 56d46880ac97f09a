package gen

import (
	"cmp"
	"fmt"
	"go/token"
	"slices"
	"strings"
)

// Error is one problem in the input, at a position, with an optional hint
// that says what to do.
type Error struct {
	Pos  token.Position
	Msg  string
	Hint string
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Pos.Filename != "" || e.Pos.IsValid() {
		b.WriteString(e.Pos.String())
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	if e.Hint != "" {
		b.WriteString("; ")
		b.WriteString(e.Hint)
	}
	return b.String()
}

// ErrorList is every problem found, sorted by position.
type ErrorList []*Error

func (l ErrorList) Error() string {
	lines := make([]string, len(l))
	for i, e := range l {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// errorCollector gathers errors as the pipeline finds them.
type errorCollector struct{ list ErrorList }

func (c *errorCollector) add(pos token.Position, hint, format string, args ...any) {
	c.list = append(c.list, &Error{Pos: pos, Msg: fmt.Sprintf(format, args...), Hint: hint})
}

// err returns the sorted errors, or nil when there are none.
func (c *errorCollector) err() error {
	if len(c.list) == 0 {
		return nil
	}
	slices.SortStableFunc(c.list, func(a, b *Error) int {
		return cmp.Or(
			cmp.Compare(a.Pos.Filename, b.Pos.Filename),
			cmp.Compare(a.Pos.Line, b.Pos.Line),
			cmp.Compare(a.Pos.Column, b.Pos.Column),
		)
	})
	return c.list
}

// didYouMean suggests the candidate got abbreviates or is closest to (at
// most two edits away), or returns "".
func didYouMean(got string, candidates []string) string {
	best, bestDist := "", 3
	for _, c := range candidates {
		if len(got) >= 3 && strings.HasPrefix(c, got) {
			return fmt.Sprintf("did you mean %q?", c)
		}
		if d := editDistance(got, c); d < bestDist {
			best, bestDist = c, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf("did you mean %q?", best)
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
