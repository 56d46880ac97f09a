package gen

import (
	"github.com/dave/jennifer/jen"
)

// emitAdapters writes, per task, the runtime.HandlerFunc that decodes the
// payload and calls the typed handler; for idempotent tasks inside
// runtime.RunIdempotent, which records the key and completes the task in
// the handler's transaction.
func emitAdapters(p *Package) []jen.Code {
	code := make([]jen.Code, len(p.Tasks))
	for i, t := range p.Tasks {
		code[i] = emitAdapter(t)
	}
	return code
}

func emitAdapter(t *Task) jen.Code {
	// var p ImportPayload
	// if err := runtime.DecodePayload(t, &p); err != nil {
	// 	return err
	// }
	body := []jen.Code{
		jen.Var().Id("p").Id(t.TypeName),
		jen.If(
			jen.Err().Op(":=").Qual(runtimePath, "DecodePayload").Call(jen.Id("t"), jen.Op("&").Id("p")),
			jen.Err().Op("!=").Nil(),
		).Block(jen.Return(jen.Err())),
	}
	key := jen.Lit("")
	if t.KeyField != "" {
		key = jen.Add(fieldString("p", t.KeyField, t.KeyNeedsConv))
		// t.IdempotencyKey = p.RequestID
		body = append(body, jen.Id("t").Dot("IdempotencyKey").Op("=").Add(fieldString("p", t.KeyField, t.KeyNeedsConv)))
	}
	if t.Options.Idempotent {
		// return runtime.RunIdempotent(ctx, t, p.RequestID, func(ctx context.Context, tx *sql.Tx) error {
		// 	return h.HandleImport(ctx, tx, t, p)
		// })
		body = append(body, jen.Return(jen.Qual(runtimePath, "RunIdempotent").Call(
			jen.Id("ctx"), jen.Id("t"), key,
			jen.Func().Params(ctxParam(), txParam()).Error().Block(
				callHandler(t, jen.Id("ctx"), jen.Id("tx"), jen.Id("t"), jen.Id("p"))...,
			),
		)))
	} else {
		body = append(body, callHandler(t, jen.Id("ctx"), jen.Id("t"), jen.Id("p"))...)
	}
	return jen.Commentf("%s decodes %s payloads for h.", t.AdapterFunc(), t.TypeName).Line().
		Func().Id(t.AdapterFunc()).Params(jen.Id("h").Id(t.HandlerName())).Qual(runtimePath, "HandlerFunc").Block(
		jen.Return(jen.Func().Params(ctxParam(), jen.Id("t").Add(taskPtr())).Error().Block(body...)),
	)
}

// callHandler calls HandleX with args and returns its error; a typed
// result is stored first:
//
//	r, err := h.HandleImport(ctx, t, p)
//	if err != nil {
//		return err
//	}
//	return t.SetResultJSON(r)
func callHandler(t *Task, args ...jen.Code) []jen.Code {
	call := jen.Id("h").Dot(t.HandleMethod()).Call(args...)
	if t.ResultType == "" {
		return []jen.Code{jen.Return(call)}
	}
	return []jen.Code{
		jen.List(jen.Id("r"), jen.Err()).Op(":=").Add(call),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
		jen.Return(jen.Id("t").Dot("SetResultJSON").Call(jen.Id("r"))),
	}
}
