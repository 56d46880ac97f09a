package gen

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"reflect"
	"slices"
	"strings"

	"github.com/leasegen/leasegen/internal/dag"
)

// maxWorkflowSteps is runtime.MaxWorkflowSteps.
const maxWorkflowSteps = 1000

// workflow builds the workflow of one type declaration with a
// //leasegen:workflow directive, or returns nil when the declaration is
// broken. Each field is a step: its type the payload, its after tag the
// steps it runs after, its result tag what its handler returns.
func (b *builder) workflow(ts *ast.TypeSpec, doc *ast.CommentGroup, directive *ast.Comment) *Workflow {
	pos := b.pos(ts.Name.Pos())
	if rest := strings.TrimSpace(strings.TrimPrefix(directive.Text, "//"+workflowDirective)); rest != "" {
		b.errs.add(b.pos(directive.Slash), "write //leasegen:workflow alone: a step's options are its field's tags", "unknown workflow options %q", rest)
		return nil
	}
	obj, _ := b.pkg.TypesInfo.Defs[ts.Name].(*types.TypeName)
	switch {
	case ts.Assign.IsValid():
		b.errs.add(pos, "annotate the original type", "leasegen:workflow on alias %s", ts.Name.Name)
		return nil
	case ts.TypeParams != nil:
		b.errs.add(pos, "declare a non-generic struct", "leasegen:workflow on generic type %s", ts.Name.Name)
		return nil
	case obj == nil:
		return nil
	}
	st, ok := obj.Type().Underlying().(*types.Struct)
	if !ok {
		b.errs.add(pos, "a workflow is a struct whose fields are its steps", "leasegen:workflow on %s, a %s type", ts.Name.Name, kindName(obj.Type().Underlying()))
		return nil
	}
	w := &Workflow{TypeName: ts.Name.Name, Name: snakeCase(goName(ts.Name.Name)), Doc: strings.TrimSpace(doc.Text()), Pos: pos}
	if st.NumFields() == 0 || st.NumFields() > maxWorkflowSteps {
		b.errs.add(pos, "give it a field per step", "workflow %s has %d steps: it needs 1 to %d", w.TypeName, st.NumFields(), maxWorkflowSteps)
		return nil
	}
	failed := false
	enc := encodabilityChecker{pkg: b.pkg.Types, fset: b.pkg.Fset, errs: b.errs, seen: map[types.Type]bool{}}
	for i := range st.NumFields() {
		if s := b.step(w, st.Field(i), reflect.StructTag(st.Tag(i)), &enc); s != nil {
			w.Steps = append(w.Steps, s)
		} else {
			failed = true
		}
	}
	if failed || !b.checkAfter(w) || !b.checkFanOuts(w) {
		return nil
	}
	return w
}

// step builds the step of field f of w, or returns nil after reporting.
func (b *builder) step(w *Workflow, f *types.Var, tag reflect.StructTag, enc *encodabilityChecker) *Step {
	pos := b.pos(f.Pos())
	typ, fanOut := fanOutOf(f.Type())
	named, isNamed := typ.(*types.Named)
	switch {
	case f.Embedded():
		b.errs.add(pos, "name the field: its name is the step's", "embedded field %s in workflow %s", f.Name(), w.TypeName)
		return nil
	case !f.Exported():
		b.errs.add(pos, "export the field: its name is the step's, in the generated API", "workflow %s's step %s is unexported", w.TypeName, f.Name())
		return nil
	case !isNamed || named.Obj().Pkg() != b.pkg.Types:
		b.errs.add(pos, "declare a struct type for the step's payload in package "+b.pkg.Types.Name(),
			"step %s of workflow %s has type %s, not a type of this package", f.Name(), w.TypeName, types.TypeString(typ, types.RelativeTo(b.pkg.Types)))
		return nil
	}
	if _, isStruct := named.Underlying().(*types.Struct); !isStruct {
		b.errs.add(pos, "payloads are struct types", "step %s of workflow %s has type %s, a %s type", f.Name(), w.TypeName, named.Obj().Name(), kindName(named.Underlying()))
		return nil
	}
	enc.check(named, named.Obj().Name(), pos)
	s := &Step{Field: f.Name(), TypeName: named.Obj().Name(), Name: w.Name + "." + snakeCase(f.Name()), FanOut: fanOut, Pos: pos, wf: w}
	if after, ok := tag.Lookup("after"); ok {
		for _, p := range strings.Split(after, ",") {
			s.After = append(s.After, strings.TrimSpace(p))
		}
	}
	if result, ok := tag.Lookup("result"); ok {
		if s.ResultType = b.resultType(result, pos, enc); s.ResultType == "" {
			return nil
		}
	}
	if !b.stepOptions(s, tag.Get("leasegen")) {
		return nil
	}
	return s
}

// fanOutOf returns T and true for runtime.FanOut[T], else t and false.
func fanOutOf(t types.Type) (types.Type, bool) {
	named, ok := t.(*types.Named)
	if !ok || named.Obj().Pkg() == nil || named.Obj().Pkg().Path() != runtimePath || named.Obj().Name() != "FanOut" || named.TypeArgs().Len() != 1 {
		return t, false
	}
	return named.TypeArgs().At(0), true
}

// stepOptionNames are the options a step's leasegen tag takes: the task
// options that apply to one task type, and run_on_parent_failure.
var stepOptionNames = []string{"priority", "max_attempts", "timeout", "lease", "backoff", "concurrency", "rate", "run_on_parent_failure"}

// stepOptions parses s's leasegen tag into s, reporting what it refuses
// at s's position; it returns false when it refused something.
func (b *builder) stepOptions(s *Step, tag string) bool {
	ok := true
	fail := func(hint, format string, args ...any) {
		b.errs.add(s.Pos, hint, "step %s of workflow %s: "+format, append([]any{s.Field, s.wf.TypeName}, args...)...)
		ok = false
	}
	var rest []string
	for _, f := range fields(tag) {
		key, _, _ := strings.Cut(f.text, "=")
		switch {
		case f.text == "run_on_parent_failure":
			s.RunOnParentFailure = true
		case key == "run_on_parent_failure":
			_, value, _ := strings.Cut(f.text, "=")
			if v, ok := unquote(value); ok {
				value = v
			}
			for _, p := range strings.Split(value, ",") {
				if p = strings.TrimSpace(p); p != "" {
					s.RunOnFailureOf = append(s.RunOnFailureOf, p)
				}
			}
		case !slices.Contains(stepOptionNames, key):
			hint := didYouMean(key, stepOptionNames)
			if hint == "" {
				hint = "a step's leasegen tag takes " + strings.Join(stepOptionNames, ", ")
			}
			fail(hint, "option %q does not apply to a workflow step", key)
		default:
			rest = append(rest, f.text)
		}
	}
	opts, errs := parseDirective(strings.Join(rest, " "))
	for _, e := range errs {
		fail(e.Hint, "%s", e.Msg)
	}
	if (s.RunOnParentFailure || s.RunOnFailureOf != nil) && s.FanOut {
		fail("drop run_on_parent_failure: a fan-out's steps exist only once the step before it succeeded", "a fan-out cannot run on its parent's failure")
	}
	for _, p := range s.RunOnFailureOf {
		if !slices.Contains(s.After, p) {
			fail(fmt.Sprintf("name steps of its after tag (%s), or write run_on_parent_failure alone for all of them", strings.Join(s.After, ", ")),
				"run_on_parent_failure names %q, which it does not run after", p)
		}
	}
	s.Options = opts
	return ok
}

// checkAfter checks that each step's parents are other steps of w, named
// once, and that no step waits for itself through others; it reports
// what is wrong and returns false.
func (b *builder) checkAfter(w *Workflow) bool {
	index := map[string]int{}
	names := make([]string, len(w.Steps))
	for i, s := range w.Steps {
		index[s.Field], names[i] = i, s.Field
	}
	ok := true
	parents := make([][]int, len(w.Steps))
	for i, s := range w.Steps {
		seen := map[string]bool{}
		for _, p := range s.After {
			j, known := index[p]
			switch {
			case !known:
				hint := didYouMean(p, names)
				if hint == "" {
					hint = "name steps of " + w.TypeName + ": " + strings.Join(names, ", ")
				}
				b.errs.add(s.Pos, hint, "step %s of workflow %s runs after %q, which is not a step of it", s.Field, w.TypeName, p)
				ok = false
			case j == i:
				b.errs.add(s.Pos, "remove it from the after tag", "step %s of workflow %s runs after itself", s.Field, w.TypeName)
				ok = false
			case seen[p]:
				b.errs.add(s.Pos, "name each parent once", "step %s of workflow %s names %s twice in its after tag", s.Field, w.TypeName, p)
				ok = false
			default:
				seen[p] = true
				parents[i] = append(parents[i], j)
			}
		}
	}
	if !ok {
		return false
	}
	if _, cyclic := dag.Order(parents); cyclic != nil {
		cycle := make([]string, len(cyclic))
		for k, i := range cyclic {
			cycle[k] = w.Steps[i].Field
		}
		b.errs.add(w.Pos, "a step cannot wait for itself: remove one of the after tags that close the loop",
			"workflow %s has a cycle among steps %s", w.TypeName, strings.Join(cycle, ", "))
		return false
	}
	return true
}

// checkFanOuts checks that each fan-out step runs after exactly one step
// (the one that returns its payloads), and that this parent is no fan-out
// itself, declares no result (its handler returns the payloads) and feeds
// no other fan-out; it reports what is wrong and returns false.
func (b *builder) checkFanOuts(w *Workflow) bool {
	ok := true
	fed := map[string]*Step{} // a spawner's fan-out
	for _, s := range w.Steps {
		if !s.FanOut {
			continue
		}
		if len(s.After) != 1 {
			b.errs.add(s.Pos, "name in its after tag the one step whose handler returns its payloads",
				"fan-out %s of workflow %s runs after %d steps: it needs exactly one", s.Field, w.TypeName, len(s.After))
			ok = false
			continue
		}
		p := w.step(s.After[0])
		switch {
		case p.FanOut:
			b.errs.add(s.Pos, "put a step between them that returns the payloads", "fan-out %s of workflow %s runs after fan-out %s: a fan-out's steps spawn none", s.Field, w.TypeName, p.Field)
			ok = false
		case p.ResultType != "":
			b.errs.add(p.Pos, fmt.Sprintf("drop its result tag: its handler returns []%s, the payloads of %s", s.TypeName, s.Field),
				"step %s of workflow %s feeds fan-out %s and declares a result", p.Field, w.TypeName, s.Field)
			ok = false
		case fed[p.Field] != nil:
			b.errs.add(s.Pos, "give each fan-out a step of its own that returns its payloads",
				"step %s of workflow %s feeds fan-outs %s and %s", p.Field, w.TypeName, fed[p.Field].Field, s.Field)
			ok = false
		}
		fed[p.Field] = s
	}
	// A step after a spawner waits for the steps it spawns: say so in
	// its tag.
	for _, s := range w.Steps {
		for _, name := range s.After {
			if f := fed[name]; f != nil && !s.FanOut && !slices.Contains(s.After, f.Field) {
				b.errs.add(s.Pos, fmt.Sprintf(`write after:"%s" (or both): a step after %s waits for every step of %s too`, f.Field, name, f.Field),
					"step %s of workflow %s runs after %s, which feeds fan-out %s, but not after %s", s.Field, w.TypeName, name, f.Field, f.Field)
				ok = false
			}
		}
	}
	return ok
}

// checkWorkflowNames reports workflows whose Go names or stored names
// collide with each other's or with the tasks'.
func (b *builder) checkWorkflowNames(p *Package) {
	consts := map[string]token.Position{}
	for _, t := range p.Tasks {
		consts[t.ConstName()] = t.Pos
	}
	byName := map[string]*Workflow{}
	for _, w := range p.Workflows {
		if first, dup := byName[w.Name]; dup {
			b.errs.add(w.Pos, "rename one of the types", "workflow name %q of %s is already used by %s at %s", w.Name, w.TypeName, first.TypeName, first.Pos)
		}
		byName[w.Name] = w
		for _, s := range w.Steps {
			if at, dup := consts[s.ConstName()]; dup {
				b.errs.add(s.Pos, "rename the step or the other declaration", "step %s of workflow %s becomes %s, which %s declares too", s.Field, w.TypeName, s.ConstName(), at)
			}
			consts[s.ConstName()] = s.Pos
		}
	}
}
