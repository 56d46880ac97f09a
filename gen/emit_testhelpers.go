package gen

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"
	"golang.org/x/tools/imports"
)

const (
	leasetestPath = "github.com/leasegen/leasegen/runtime/leasetest"
	testingPath   = "testing"
)

// testHelpersPackage is the name of the package of p's typed test helpers,
// in the folder of that name inside p's: billing's are billingtest.
func testHelpersPackage(p *Package) string { return p.Name + "test" }

// emitTestHelpers renders p's typed test helpers: for each task, the
// leasetest assertions bound to its task type and payload type, so that a
// test that names the wrong type or a renamed field does not compile.
func emitTestHelpers(p *Package) ([]byte, error) {
	name := testHelpersPackage(p)
	f := jen.NewFilePathName(p.Path+"/"+name, name)
	f.HeaderComment("// " + generatedHeader + "\n// source: " + strings.Join(sourceFiles(p), ", "))
	f.PackageComment(fmt.Sprintf("Package %s holds typed test helpers for the tasks of package %s:", name, p.Name))
	f.PackageComment("the assertions of package leasetest, bound to each task's type and payload.")
	f.ImportName(p.Path, p.Name)
	f.ImportName(leasetestPath, "leasetest")
	for _, t := range p.Tasks {
		for _, c := range testHelpers(p, t) {
			f.Line()
			f.Add(c)
		}
	}
	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		return nil, fmt.Errorf("render %s: %w", name, err)
	}
	out, err := imports.Process(DefaultOutput, buf.Bytes(), &imports.Options{Comments: true, FormatOnly: true})
	if err != nil {
		return nil, fmt.Errorf("format %s: %w", name, err)
	}
	return out, nil
}

// testHelpers are one task's RequireXEnqueued, RequireXNotEnqueued and
// RequireManyXEnqueued.
func testHelpers(p *Package, t *Task) []jen.Code {
	payload := jen.Qual(p.Path, t.TypeName)
	enqueued := jen.Qual(leasetestPath, "Enqueued").Index(payload.Clone())
	match := func() jen.Code { return jen.Id("match").Func().Params(payload.Clone()).Bool() }
	params := func(extra ...jen.Code) []jen.Code {
		ps := []jen.Code{jen.Id("t").Qual(testingPath, "TB"), jen.Id("q").Qual(leasetestPath, "Querier")}
		return append(append(ps, extra...), match())
	}
	call := func(fn string, args ...jen.Code) *jen.Statement {
		all := append([]jen.Code{jen.Id("t"), jen.Id("q"), jen.Qual(p.Path, t.ConstName())}, args...)
		return jen.Qual(leasetestPath, fn).Call(append(all, jen.Id("match"))...)
	}
	helper := jen.Id("t").Dot("Helper").Call()
	return []jen.Code{
		docLines(fmt.Sprintf("Require%sEnqueued fails t unless a task of type %q whose payload match", t.GoName, t.Name),
			"accepts is stored, and returns the first (see leasetest.RequireEnqueued).").Line().
			Func().Id("Require"+t.GoName+"Enqueued").Params(params()...).Add(enqueued.Clone()).Block(helper.Clone(), jen.Return(call("RequireEnqueued"))),
		docLines(fmt.Sprintf("Require%sNotEnqueued fails t if a task of type %q whose payload match", t.GoName, t.Name),
			"accepts is stored.").Line().
			Func().Id("Require"+t.GoName+"NotEnqueued").Params(params()...).Block(helper.Clone(), call("RequireNotEnqueued")),
		docLines(fmt.Sprintf("RequireMany%sEnqueued fails t unless exactly n tasks of type %q match,", t.GoName, t.Name),
			"and returns them in the order they were enqueued.").Line().
			Func().Id("RequireMany"+t.GoName+"Enqueued").Params(params(jen.Id("n").Int())...).Index().Add(enqueued.Clone()).
			Block(helper.Clone(), jen.Return(call("RequireManyEnqueued", jen.Id("n")))),
	}
}
