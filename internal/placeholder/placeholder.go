// Package placeholder rewrites statements written with ? placeholders
// (MySQL's and SQLite's) into another engine's, for leasegen's own test
// and demo statements; the drivers' statements come from sqlc.
package placeholder

import (
	"strconv"
	"strings"
)

// Rewrite replaces the nth ? of query (from 1) with mark(n). The query
// must hold no ? in its literals.
func Rewrite(query string, mark func(n int) string) string {
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteString(mark(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Dollar is PostgreSQL's placeholder: $1, $2, ...
func Dollar(n int) string { return "$" + strconv.Itoa(n) }
