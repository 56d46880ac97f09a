package gen

import (
	"fmt"

	"github.com/dave/jennifer/jen"
)

// emitConstants writes one constant per task type:
//
//	// TaskImport is the task type of ImportPayload.
//	const TaskImport = "import"
func emitConstants(p *Package) []jen.Code {
	defs := make([]jen.Code, len(p.Tasks))
	for i, t := range p.Tasks {
		defs[i] = jen.Add(withPayloadDoc(t, fmt.Sprintf("%s is the task type of %s.", t.ConstName(), t.TypeName))).
			Line().Id(t.ConstName()).Op("=").Lit(t.Name)
	}
	return []jen.Code{
		jen.Comment("The task types of this package, as stored in the database.").Line().Const().Defs(defs...),
	}
}
