package gen

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"
	"text/template"

	"github.com/leasegen/leasegen/runtime/migrations"
	"github.com/leasegen/leasegen/templates"
)

// schemaStep is one migration file as the schema template shows it.
type schemaStep struct {
	Name string
	SQL  string
}

// schemaEngines maps -schema-engine values to their migrations.
var schemaEngines = map[string]struct {
	title string
	fsys  fs.FS
}{
	"mysql":    {"MySQL/MariaDB", migrations.MySQL},
	"postgres": {"PostgreSQL", migrations.Postgres},
	"sqlite":   {"SQLite", migrations.SQLite},
}

// renderSchema renders templates/schema.sql.tmpl for p: the engine's
// migrations, in order, headed by the package's task types.
func renderSchema(p *Package, engine string) ([]byte, error) {
	eng, ok := schemaEngines[engine]
	if !ok {
		return nil, fmt.Errorf("unknown schema engine %q: use mysql, postgres or sqlite", engine)
	}
	names, err := fs.Glob(eng.fsys, engine+"/*.sql")
	if err != nil {
		return nil, err
	}
	var steps []schemaStep
	for _, name := range names { // Glob sorts: NNNN_ prefixes keep version order
		body, err := fs.ReadFile(eng.fsys, name)
		if err != nil {
			return nil, err
		}
		steps = append(steps, schemaStep{Name: path.Base(name), SQL: strings.TrimSpace(string(body))})
	}
	return renderTemplate("schema.sql.tmpl", map[string]any{
		"Engine": eng.title, "Package": p.Path, "TaskTypes": taskTypes(p), "Steps": steps,
	})
}

// renderAlerts renders the Prometheus alert rules for p's task types.
func renderAlerts(p *Package) ([]byte, error) {
	return renderTemplate("alerts.yml.tmpl", map[string]any{"Package": p.Path, "TaskTypes": taskTypes(p), "Schedules": scheduleNames(p)})
}

// renderDashboard renders the Grafana dashboard for p's task types.
func renderDashboard(p *Package) ([]byte, error) {
	sum := sha256.Sum256([]byte(p.Path))
	return renderTemplate("dashboard.json.tmpl", map[string]any{
		"Package": p.Path, "TaskTypes": taskTypes(p), "Schedules": scheduleNames(p), "UID": "leasegen-" + hex.EncodeToString(sum[:6]),
	})
}

// renderTemplate executes one file of templates/ with data.
func renderTemplate(name string, data any) ([]byte, error) {
	tmpl, err := template.New(name).Funcs(template.FuncMap{
		"join":        strings.Join,
		"alternation": alternation,
	}).ParseFS(templates.FS, name)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, data); err != nil {
		return nil, fmt.Errorf("render %s: %w", name, err)
	}
	return buf.Bytes(), nil
}

// alternation is a regular expression matching exactly the given names.
func alternation(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = regexp.QuoteMeta(n)
	}
	return strings.Join(quoted, "|")
}

// scheduleNames are the names of p's periodic tasks' schedules: their task
// types.
func scheduleNames(p *Package) []string {
	var names []string
	for _, t := range p.Tasks {
		if t.Options.Periodic() {
			names = append(names, t.Name)
		}
	}
	return names
}

func taskTypes(p *Package) []string {
	types := make([]string, len(p.Tasks))
	for i, t := range p.Tasks {
		types[i] = t.Name
	}
	return types
}
