package gen

import (
	"fmt"

	"github.com/dave/jennifer/jen"
)

// emitHandlers writes one XHandler interface per task and per workflow
// and the Handlers interface that embeds them all, so that Register
// cannot be called with a handler missing.
func emitHandlers(p *Package) []jen.Code {
	var code []jen.Code
	var all []jen.Code
	for _, t := range p.Tasks {
		code = append(code, emitHandler(t))
		all = append(all, jen.Id(t.HandlerName()))
	}
	workflows, names := emitWorkflowHandlers(p)
	code = append(code, workflows...)
	all = append(all, names...)
	code = append(code, jen.Commentf("Handlers handles every %s of package %s; Register needs all of them,", p.handledNoun(), p.Name).Line().
		Comment("so a missing handler is a compile error.").Line().
		Type().Id("Handlers").Interface(all...))
	return code
}

// handlerParams are HandleX's parameters: idempotent tasks get the
// transaction that completes them.
func handlerParams(t *Task) []jen.Code {
	params := []jen.Code{ctxParam()}
	if t.Options.Idempotent {
		params = append(params, txParam())
	}
	return append(params, jen.Id("t").Add(taskPtr()), jen.Id("p").Id(t.TypeName))
}

func emitHandler(t *Task) jen.Code {
	doc := fmt.Sprintf("%s handles %s tasks.", t.HandlerName(), t.ConstName())
	method := fmt.Sprintf("%s runs one execution; an error retries it with backoff unless it is", t.HandleMethod())
	var methodDoc []string
	if t.Options.Idempotent {
		methodDoc = []string{
			method,
			"runtime.Permanent. Write through tx: the writes commit together with the task's",
			"fenced completion, or not at all. A task whose key already committed is",
			"skipped without calling it.",
		}
	} else {
		methodDoc = []string{method, "runtime.Permanent, and runtime.Snooze(d) runs it again later."}
	}
	if t.ResultType != "" {
		methodDoc = append(methodDoc, fmt.Sprintf("Its %s, when it returns no error, is stored with the completion", t.ResultType),
			fmt.Sprintf("(as JSON, at most runtime.MaxResultBytes) and read back by Client.%s.", t.WaitName()))
	}
	return jen.Add(withPayloadDoc(t, doc)).Line().
		Type().Id(t.HandlerName()).Interface(
		docLines(methodDoc...).Line().
			Id(t.HandleMethod()).Params(handlerParams(t)...).Add(handlerResults(t)),
	)
}

// handlerResults are HandleX's results: the task's result, when it has a
// type, and the error.
func handlerResults(t *Task) jen.Code {
	if t.ResultType == "" {
		return jen.Error()
	}
	return jen.Params(jen.Id(t.ResultType), jen.Error())
}
