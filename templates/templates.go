// Package templates holds the text templates for what leasegen renders that
// is not Go: the schema SQL for a user's own migration tool, Prometheus alert
// rules and a Grafana dashboard with the service's own task types.
package templates

import "embed"

// FS holds the templates, named NAME.tmpl.
//
//go:embed *.tmpl
var FS embed.FS
