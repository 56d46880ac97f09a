package migrations

import (
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
)

// Step is one versioned schema step: the file NNNN_name.sql.
type Step struct {
	Version    int
	Name       string
	Statements []string
}

// Load reads the NNNN_name.sql files at the root of fsys (an engine's
// folder, such as fs.Sub(MySQL, "mysql")), in version order.
func Load(fsys fs.FS) ([]Step, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, err
	}
	var out []Step
	for _, e := range entries {
		name := e.Name()
		prefix, _, ok := strings.Cut(name, "_")
		version, err := strconv.Atoi(prefix)
		if !ok || err != nil || !strings.HasSuffix(name, ".sql") {
			return nil, fmt.Errorf("migration file %s: want NNNN_name.sql", name)
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		out = append(out, Step{Version: version, Name: name, Statements: Split(string(body))})
	}
	slices.SortFunc(out, func(a, b Step) int { return a.Version - b.Version })
	return out, nil
}

// Split splits a migration file on semicolons that end a line, dropping
// comment lines; a $$-quoted body (a PostgreSQL function's) is one part of
// its statement. Our migrations keep semicolons out of strings.
func Split(body string) []string {
	var stmts []string
	var cur strings.Builder
	quoted := false // inside $$ ... $$
	for line := range strings.Lines(body) {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || (!quoted && strings.HasPrefix(trimmed, "--")) {
			continue
		}
		cur.WriteString(line)
		if strings.Count(line, "$$")%2 == 1 {
			quoted = !quoted
		}
		if !quoted && strings.HasSuffix(trimmed, ";") {
			stmts = append(stmts, strings.TrimSuffix(strings.TrimSpace(cur.String()), ";"))
			cur.Reset()
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		stmts = append(stmts, s)
	}
	return stmts
}
