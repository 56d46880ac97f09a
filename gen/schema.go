package gen

import (
	"bytes"
	"fmt"
	"io/fs"
	"path"
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
	"mysql":  {"MySQL/MariaDB", migrations.MySQL},
	"sqlite": {"SQLite", migrations.SQLite},
}

// renderSchema renders templates/schema.sql.tmpl for p: the engine's
// migrations, in order, headed by the package's task types.
func renderSchema(p *Package, engine string) ([]byte, error) {
	eng, ok := schemaEngines[engine]
	if !ok {
		return nil, fmt.Errorf("unknown schema engine %q: use mysql or sqlite", engine)
	}
	tmpl, err := template.New("schema.sql.tmpl").
		Funcs(template.FuncMap{"join": strings.Join}).
		ParseFS(templates.FS, "schema.sql.tmpl")
	if err != nil {
		return nil, err
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
	types := make([]string, len(p.Tasks))
	for i, t := range p.Tasks {
		types[i] = t.Name
	}
	var buf bytes.Buffer
	err = tmpl.Execute(&buf, map[string]any{
		"Engine": eng.title, "Package": p.Path, "TaskTypes": types, "Steps": steps,
	})
	if err != nil {
		return nil, fmt.Errorf("render schema: %w", err)
	}
	return buf.Bytes(), nil
}
