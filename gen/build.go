package gen

import (
	"go/ast"
	"go/token"
	"go/types"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode"

	"golang.org/x/tools/go/packages"
)

// builder turns one loaded package into a model, collecting every error
// and warning.
type builder struct {
	pkg   *packages.Package
	errs  *errorCollector
	warns *errorCollector
	// seen holds the comments read as directives of a type declaration.
	seen map[token.Pos]bool
}

// buildPackage finds the //leasegen:task types of pkg and checks them.
func buildPackage(pkg *packages.Package, errs, warns *errorCollector) *Package {
	b := &builder{pkg: pkg, errs: errs, warns: warns, seen: map[token.Pos]bool{}}
	out := &Package{Name: pkg.Name, Path: pkg.PkgPath}
	if len(pkg.GoFiles) > 0 {
		out.Dir = dirOf(pkg.GoFiles[0])
	}
	files := slices.Clone(pkg.Syntax)
	slices.SortFunc(files, func(a, b *ast.File) int {
		return strings.Compare(pkg.Fset.File(a.Pos()).Name(), pkg.Fset.File(b.Pos()).Name())
	})
	for _, f := range files {
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				ts := spec.(*ast.TypeSpec)
				doc := ts.Doc
				if doc == nil && !gd.Lparen.IsValid() {
					doc = gd.Doc // type X struct{}: the comment sits on the GenDecl
				}
				switch directive, kind := b.findDirective(doc); kind {
				case taskDirective:
					if t := b.task(ts, doc, directive); t != nil {
						out.Tasks = append(out.Tasks, t)
					}
				case workflowDirective:
					if w := b.workflow(ts, doc, directive); w != nil {
						out.Workflows = append(out.Workflows, w)
					}
				}
			}
		}
	}
	b.checkDuplicates(out.Tasks)
	b.checkWorkflowNames(out)
	for _, f := range files {
		b.warnStrayDirectives(f)
	}
	return out
}

// warnStrayDirectives warns about comments that look like a directive but
// are not read as one: "// leasegen:task" with a space, a block comment, or
// a directive that no type declaration carries (a blank line between them,
// or no type below it). Each would silently leave a type out.
func (b *builder) warnStrayDirectives(f *ast.File) {
	for _, group := range f.Comments {
		for _, c := range group.List {
			body := strings.TrimLeft(strings.TrimPrefix(strings.TrimPrefix(c.Text, "//"), "/*"), " \t*")
			if b.seen[c.Slash] || !strings.HasPrefix(body, "leasegen:task") {
				continue
			}
			switch {
			case strings.HasPrefix(c.Text, "/*"):
				b.warns.add(b.pos(c.Slash), "write //leasegen:task as a line comment directly above the type", "a block comment is not a directive; this type is not a task")
			case !strings.HasPrefix(c.Text, directivePrefix):
				b.warns.add(b.pos(c.Slash), "write //leasegen:task, with no space after //", "%q is not a directive; this type is not a task", strings.Fields(c.Text)[0]+" leasegen:task")
			default:
				b.warns.add(b.pos(c.Slash), "put it directly above `type X struct`, with no blank line between", "//leasegen:task is not attached to a type declaration")
			}
		}
	}
}

// task builds the task of one type declaration with a //leasegen:task
// directive, or returns nil when the declaration is broken.
func (b *builder) task(ts *ast.TypeSpec, doc *ast.CommentGroup, directive *ast.Comment) *Task {
	text := strings.TrimPrefix(directive.Text, directivePrefix)
	opts, optErrs := parseDirective(text)
	for _, e := range optErrs {
		b.errs.add(b.pos(directive.Slash+token.Pos(len(directivePrefix)+e.Offset)), e.Hint, "%s", e.Msg)
	}
	pos := b.pos(ts.Name.Pos())
	if opts.Lease > 0 && opts.Lease < time.Second {
		b.warns.add(pos, "a lease of 1s or more renews at a calmer pace", "lease=%s: workers renew every lease/6 (%s), one statement each time", opts.Lease, (opts.Lease / 6).Round(time.Millisecond))
	}
	obj, _ := b.pkg.TypesInfo.Defs[ts.Name].(*types.TypeName)
	switch {
	case ts.Assign.IsValid():
		b.errs.add(pos, "annotate the original type", "leasegen:task on alias %s", ts.Name.Name)
		return nil
	case ts.TypeParams != nil:
		b.errs.add(pos, "declare a non-generic payload type", "leasegen:task on generic type %s", ts.Name.Name)
		return nil
	case obj == nil:
		return nil // the type checker already failed on it
	}
	st, ok := obj.Type().Underlying().(*types.Struct)
	if !ok {
		b.errs.add(pos, "payloads are struct types", "leasegen:task on %s, a %s type", ts.Name.Name, kindName(obj.Type().Underlying()))
		return nil
	}
	t := &Task{
		TypeName: ts.Name.Name,
		GoName:   goName(ts.Name.Name),
		Doc:      strings.TrimSpace(doc.Text()),
		Options:  opts,
		Pos:      pos,
	}
	t.Name = opts.Name
	if t.Name == "" {
		t.Name = snakeCase(t.GoName)
	}
	b.fieldTags(t, st)
	enc := encodabilityChecker{pkg: b.pkg.Types, fset: b.pkg.Fset, errs: b.errs, seen: map[types.Type]bool{}}
	enc.check(obj.Type(), ts.Name.Name, pos)
	if opts.Result != "" {
		at := b.pos(directive.Slash + token.Pos(strings.Index(directive.Text, "result=")))
		t.ResultType = b.resultType(opts.Result, at, &enc)
	}
	if len(optErrs) > 0 {
		return nil
	}
	if opts.Payload != "" {
		if problem := tickPayloadProblem(obj.Type(), opts.Payload, ts.Name.Name); problem != "" {
			at := directive.Slash + token.Pos(max(0, strings.Index(directive.Text, "payload=")))
			b.errs.add(b.pos(at), "make it decode into "+ts.Name.Name+", or every tick fails for good",
				"payload=%s does not decode: %s", opts.Payload, problem)
		}
	}
	return t
}

// resultType checks the type that result= names: a type declared in the
// package, or a predeclared basic type, that encodes as JSON and decodes
// back equal. It returns the name, or "" after reporting at pos.
func (b *builder) resultType(name string, pos token.Position, enc *encodabilityChecker) string {
	obj := b.pkg.Types.Scope().Lookup(name)
	if obj == nil {
		if basic, ok := types.Universe.Lookup(name).(*types.TypeName); ok {
			if _, isBasic := basic.Type().(*types.Basic); isBasic {
				obj = basic
			}
		}
	}
	tn, ok := obj.(*types.TypeName)
	if obj != nil && !ok {
		b.errs.add(pos, "name a type of package "+b.pkg.Types.Name(), "result %s is a %s, not a type", name, objectKind(obj))
		return ""
	}
	if !ok {
		var typeNames []string
		for _, n := range b.pkg.Types.Scope().Names() {
			if _, isType := b.pkg.Types.Scope().Lookup(n).(*types.TypeName); isType {
				typeNames = append(typeNames, n)
			}
		}
		hint := didYouMean(name, typeNames)
		if hint == "" {
			hint = "declare it in package " + b.pkg.Types.Name() + ", or name a basic type such as string"
		}
		b.errs.add(pos, hint, "result type %s is not a type of package %s", name, b.pkg.Types.Name())
		return ""
	}
	if tn.IsAlias() {
		b.errs.add(pos, "name the type it stands for", "result type %s is an alias", name)
		return ""
	}
	enc.check(tn.Type(), name, pos)
	return name
}

// The directives a type declaration can carry.
const (
	taskDirective     = "leasegen:task"
	workflowDirective = "leasegen:workflow"
)

// findDirective returns the doc comment's leasegen directive and its kind
// ("" for none), reporting misspelled ones and repeats.
func (b *builder) findDirective(doc *ast.CommentGroup) (*ast.Comment, string) {
	if doc == nil {
		return nil, ""
	}
	var found *ast.Comment
	kind := ""
	for _, c := range doc.List {
		if !strings.HasPrefix(c.Text, "//leasegen:") {
			continue
		}
		b.seen[c.Slash] = true
		word, _, _ := strings.Cut(strings.TrimPrefix(c.Text, "//"), " ")
		switch {
		case word != taskDirective && word != workflowDirective:
			b.errs.add(b.pos(c.Slash), didYouMean(word, []string{taskDirective, workflowDirective}), "unknown directive //%s", word)
		case found != nil:
			b.errs.add(b.pos(c.Slash), "put every option on one line, and give a type one directive", "second //%s on one type", word)
		default:
			found, kind = c, word
		}
	}
	return found, kind
}

// fieldTags reads leasegen:"key", leasegen:"owner" and
// leasegen:"concurrency_key" tags.
func (b *builder) fieldTags(t *Task, st *types.Struct) {
	keyTagged := false
	for i := range st.NumFields() {
		f := st.Field(i)
		tag, ok := reflect.StructTag(st.Tag(i)).Lookup("leasegen")
		if !ok {
			continue
		}
		keyTagged = keyTagged || tag == "key"
		pos := b.pos(f.Pos())
		var name *string
		var conv *bool
		switch tag {
		case "key":
			name, conv = &t.KeyField, &t.KeyNeedsConv
		case "owner":
			name, conv = &t.OwnerField, &t.OwnerNeedsConv
		case "concurrency_key":
			name, conv = &t.ConcurrencyKeyField, &t.ConcurrencyKeyNeedsConv
		default:
			b.errs.add(pos, didYouMean(tag, []string{"key", "owner", "concurrency_key"}), "unknown leasegen tag %q on field %s", tag, f.Name())
			continue
		}
		basic, isBasic := f.Type().Underlying().(*types.Basic)
		switch {
		case !f.Exported():
			b.errs.add(pos, "export the field", "leasegen:%q field %s is unexported", tag, f.Name())
		case !isBasic || basic.Kind() != types.String:
			b.errs.add(pos, "use a string field", "leasegen:%q field %s has type %s", tag, f.Name(), f.Type())
		case *name != "":
			b.errs.add(pos, "", "second leasegen:%q field %s (the first is %s)", tag, f.Name(), *name)
		default:
			*name = f.Name()
			*conv = !types.Identical(f.Type(), types.Typ[types.String])
		}
	}
	switch {
	case t.Options.Unique && !keyTagged:
		b.errs.add(t.Pos, "tag the field that identifies the request with `leasegen:\"key\"`", "unique task %s has no key field", t.TypeName)
	case t.Options.Idempotent && !keyTagged:
		b.warns.add(t.Pos, "tag the field that identifies the work with `leasegen:\"key\"`: a second task with the same key then skips it",
			"idempotent task %s has no key field: each task's writes commit once, with its completion, but two tasks for the same work both do it", t.TypeName)
	case t.KeyField != "" && !t.Options.Unique && !t.Options.Idempotent:
		b.errs.add(t.Pos, "add unique (deduplicate at enqueue) or idempotent (skip repeated work) to the directive", "key field %s of %s has no effect", t.KeyField, t.TypeName)
	}
	keyed := t.Options.KeyConcurrency > 0 || t.Options.Sequential || t.Options.KeyRate.Limit > 0 || t.Options.Fair
	switch {
	case keyed && t.ConcurrencyKeyField == "":
		b.errs.add(t.Pos, "tag the string field whose value groups the tasks with `leasegen:\"concurrency_key\"`",
			"task %s has key_concurrency, sequential, key_rate or fair but no concurrency key field", t.TypeName)
	case !keyed && t.ConcurrencyKeyField != "":
		b.errs.add(t.Pos, "add key_concurrency=N (at most N of a key at once), sequential (one at a time, in enqueue order), key_rate=N/DUR (at most N starts of a key in any DUR) or fair (keys share the claims) to the directive",
			"concurrency key field %s of %s has no effect", t.ConcurrencyKeyField, t.TypeName)
	}
}

// checkDuplicates reports tasks that share a stored name or a Go name.
func (b *builder) checkDuplicates(tasks []*Task) {
	byName, byGoName := map[string]*Task{}, map[string]*Task{}
	for _, t := range tasks {
		if first, dup := byName[t.Name]; dup {
			b.errs.add(t.Pos, "set a different name= on one of them", "task name %q of %s is already used by %s at %s", t.Name, t.TypeName, first.TypeName, first.Pos)
		} else {
			byName[t.Name] = t
		}
		if first, dup := byGoName[t.GoName]; dup {
			b.errs.add(t.Pos, "rename one of the types", "%s and %s both become Enqueue%s", first.TypeName, t.TypeName, t.GoName)
		} else {
			byGoName[t.GoName] = t
		}
	}
}

// pos is p's position, its file relative to the working directory as the
// go command prints it (go generate runs leasegen in the package's
// directory).
func (b *builder) pos(p token.Pos) token.Position {
	position := b.pkg.Fset.Position(p)
	position.Filename = relativePath(position.Filename)
	return position
}

// goName strips a Payload suffix and exports the rest: importPayload -> Import.
func goName(typeName string) string {
	name := typeName
	if trimmed := strings.TrimSuffix(name, "Payload"); trimmed != "" {
		name = trimmed
	}
	r := []rune(name)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// snakeCase turns a Go name into a task name: SendEmail -> send_email,
// HTTPCall -> http_call.
func snakeCase(s string) string {
	r := []rune(s)
	var b strings.Builder
	for i, c := range r {
		if unicode.IsUpper(c) {
			prevLower := i > 0 && !unicode.IsUpper(r[i-1])
			nextLower := i > 0 && i+1 < len(r) && unicode.IsLower(r[i+1]) && unicode.IsUpper(r[i-1])
			if prevLower || nextLower {
				b.WriteByte('_')
			}
			c = unicode.ToLower(c)
		}
		b.WriteRune(c)
	}
	return b.String()
}

func dirOf(file string) string {
	if i := strings.LastIndexAny(file, `/\`); i >= 0 {
		return file[:i]
	}
	return "."
}

// objectKind names what kind of object obj is, for messages.
func objectKind(obj types.Object) string {
	switch obj.(type) {
	case *types.Func:
		return "func"
	case *types.Var:
		return "var"
	case *types.Const:
		return "const"
	default:
		return "name"
	}
}
