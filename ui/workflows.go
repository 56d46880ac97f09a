package ui

import (
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"

	"github.com/leasegen/leasegen/runtime"
)

// workflowsShown bounds the workflows page: the latest workflows.
const workflowsShown = 100

func (s *server) workflows(r *http.Request) (string, string, any, error) {
	list, err := s.client.Workflows(r.Context(), workflowsShown)
	if err != nil {
		return "", "", nil, err
	}
	return "workflows", "Workflows", map[string]any{"Workflows": list, "Shown": workflowsShown}, nil
}

func (s *server) workflow(r *http.Request) (string, string, any, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		return "", "", nil, fmt.Errorf("%w: %q", runtime.ErrWorkflowNotFound, r.PathValue("id"))
	}
	w, err := s.client.Workflow(r.Context(), runtime.WorkflowID(id))
	if err != nil {
		return "", "", nil, err
	}
	return "workflow", fmt.Sprintf("Workflow %d", w.ID), map[string]any{"Workflow": w, "Graph": drawWorkflow(w, s.opts.Prefix)}, nil
}

func (s *server) workflowAction(_ http.ResponseWriter, r *http.Request, a Access) (string, string, error) {
	id, action := r.PathValue("id"), r.PathValue("action")
	back := "/workflows/" + id
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil || action != "cancel" {
		return "/workflows", "", fmt.Errorf("unknown workflow %q or action %q", id, action)
	}
	cancelled, err := s.client.CancelWorkflow(r.Context(), runtime.WorkflowID(n))
	if err != nil {
		s.log(a, "cancel failed", "workflow", id, "err", err)
		return back, "", err
	}
	s.log(a, "cancel", "workflow", id, "steps", cancelled)
	return back, fmt.Sprintf("cancel: workflow %s, %d steps that had not ended", id, cancelled), nil
}

// Graph drawing: a column per depth (a step's longest path from a root),
// steps in a column in the workflow's order.
const (
	graphCol   = 230 // column pitch
	graphRow   = 44  // row pitch
	graphNodeW = 150
	graphNodeH = 30
	// graphMaxSteps bounds the steps drawn: a fan-out of thousands reads
	// better as the table below the graph.
	graphMaxSteps = 200
)

// drawWorkflow draws w's steps and edges as an SVG, server-side: a box per
// step, colored by status (its class), linked to its task's page under
// base, and an arrow per edge. Past graphMaxSteps steps it returns a note
// instead.
func drawWorkflow(w runtime.WorkflowInfo, base string) template.HTML {
	if len(w.Steps) > graphMaxSteps {
		return template.HTML(fmt.Sprintf(`<p class="muted" id="graph-note">%d steps: too many to draw; the table lists them.</p>`, len(w.Steps)))
	}
	index := make(map[string]int, len(w.Steps))
	for i, s := range w.Steps {
		index[s.Name] = i
	}
	depth := make([]int, len(w.Steps))
	var depthOf func(i int, seen int) int
	depthOf = func(i int, seen int) int {
		if seen > len(w.Steps) { // a cycle cannot be stored; stop anyway
			return 0
		}
		d := 0
		for _, p := range w.Steps[i].After {
			if j, ok := index[p]; ok {
				d = max(d, depthOf(j, seen+1)+1)
			}
		}
		return d
	}
	rows := map[int]int{} // steps placed in each column
	x, y := make([]int, len(w.Steps)), make([]int, len(w.Steps))
	width, height := 0, 0
	for i := range w.Steps {
		depth[i] = depthOf(i, 0)
		x[i], y[i] = 10+depth[i]*graphCol, 10+rows[depth[i]]*graphRow
		rows[depth[i]]++
		width, height = max(width, x[i]+graphNodeW+10), max(height, y[i]+graphNodeH+10)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg id="workflow-graph" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="the workflow's steps and their order">`,
		width, height, width, height)
	b.WriteString(`<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" orient="auto"><path d="M0,0 L10,5 L0,10 z"/></marker></defs>`)
	for i, s := range w.Steps {
		for _, p := range s.After {
			j, ok := index[p]
			if !ok {
				continue
			}
			fmt.Fprintf(&b, `<line class="edge" data-from="%s" data-to="%s" x1="%d" y1="%d" x2="%d" y2="%d" marker-end="url(#arrow)"/>`,
				template.HTMLEscapeString(p), template.HTMLEscapeString(s.Name), x[j]+graphNodeW, y[j]+graphNodeH/2, x[i], y[i]+graphNodeH/2)
		}
	}
	for i, s := range w.Steps {
		status := string(s.Status)
		if status == "" {
			status = "DELETED"
		}
		name := template.HTMLEscapeString(s.Name)
		fmt.Fprintf(&b, `<a href="%s/tasks/%d"><g class="step status-%s" data-step="%s" data-status="%s"><rect x="%d" y="%d" width="%d" height="%d" rx="4"/>`,
			template.HTMLEscapeString(base), s.TaskID, strings.ToLower(status), name, status, x[i], y[i], graphNodeW, graphNodeH)
		fmt.Fprintf(&b, `<text x="%d" y="%d">%s · %s</text><title>step %s, task %d: %s</title></g></a>`,
			x[i]+8, y[i]+19, name, strings.ToLower(status), name, s.TaskID, status)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // every name in it is escaped above
}
