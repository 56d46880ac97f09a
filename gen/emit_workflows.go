package gen

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dave/jennifer/jen"
)

// emitWorkflowConstants writes, per workflow, its stored name and each
// step's task type:
//
//	// WorkflowOnboard is the name stored for workflows of Onboard.
//	WorkflowOnboard = "onboard"
//	// TaskOnboardVerify is the task type of step Verify of Onboard.
//	TaskOnboardVerify = "onboard.verify"
func emitWorkflowConstants(p *Package) []jen.Code {
	if len(p.Workflows) == 0 {
		return nil
	}
	var defs []jen.Code
	for _, w := range p.Workflows {
		defs = append(defs, jen.Add(withDoc(w.Doc, fmt.Sprintf("%s is the name stored for workflows of %s.", w.ConstName(), w.TypeName))).
			Line().Id(w.ConstName()).Op("=").Lit(w.Name))
		for _, s := range w.Steps {
			defs = append(defs, jen.Commentf("%s is the task type of step %s of %s.", s.ConstName(), s.Field, w.TypeName).
				Line().Id(s.ConstName()).Op("=").Lit(s.Name))
		}
	}
	return []jen.Code{jen.Comment("The workflows of this package, and the task types of their steps.").Line().Const().Defs(defs...)}
}

// withDoc appends a declaration's doc comment to a generated doc.
func withDoc(doc, first string) *jen.Statement {
	lines := []string{first}
	if doc != "" {
		lines = append(lines, "")
		lines = append(lines, strings.Split(doc, "\n")...)
	}
	return docLines(lines...)
}

// emitWorkflowClient writes, per workflow, its run handle, EnqueueX,
// EnqueueXTx, the builder of its runtime.Workflow, and WaitX.
func emitWorkflowClient(p *Package) []jen.Code {
	var code []jen.Code
	for _, w := range p.Workflows {
		fields := []jen.Code{jen.Id("ID").Qual(runtimePath, "WorkflowID")}
		for _, s := range w.Steps {
			if !s.FanOut {
				fields = append(fields, jen.Id(s.Field).Qual(runtimePath, "TaskID").Comment("step "+s.Field+"'s task"))
			}
		}
		doc := fmt.Sprintf("%s is a stored %s workflow: its id and its steps' tasks.", w.RunName(), w.TypeName)
		if slices.ContainsFunc(w.Steps, func(s *Step) bool { return s.FanOut }) {
			doc = fmt.Sprintf("%s is a stored %s workflow: its id and the tasks of its steps that are no fan-out\n(Client.Workflow lists the spawned ones).", w.RunName(), w.TypeName)
		}
		code = append(code,
			docLines(strings.Split(doc, "\n")...).Line().
				Type().Id(w.RunName()).Struct(fields...),
			emitWorkflowEnqueue(w, false), emitWorkflowEnqueue(w, true), emitWorkflowBuild(w), emitWorkflowWait(w))
	}
	return code
}

// emitWorkflowEnqueue writes EnqueueX, or EnqueueXTx with tx:
//
//	func (c *Client) EnqueueOnboard(ctx context.Context, w Onboard, opts ...runtime.EnqueueOption) (OnboardRun, error) {
//		wf, err := newOnboardWorkflow(w, opts)
//		if err != nil {
//			return OnboardRun{}, err
//		}
//		run, err := c.rt.EnqueueWorkflow(ctx, wf)
//		if err != nil {
//			return OnboardRun{}, err
//		}
//		return OnboardRun{ID: run.ID, Create: run.Tasks["Create"]}, nil
//	}
func emitWorkflowEnqueue(w *Workflow, tx bool) jen.Code {
	name, call, args := w.EnqueueName(), "EnqueueWorkflow", []jen.Code{jen.Id("ctx"), jen.Id("wf")}
	params := []jen.Code{ctxParam()}
	doc := []string{fmt.Sprintf("%s stores workflow w's steps in one transaction, each with its field's", name),
		"payload: a step starts once the steps its after tag names succeeded. opts apply",
		"to every step."}
	if tx {
		name, call, args = w.EnqueueTxName(), "EnqueueWorkflowTx", []jen.Code{jen.Id("ctx"), jen.Id("tx"), jen.Id("wf")}
		params = append(params, txParam())
		doc = []string{fmt.Sprintf("%s stores workflow w inside tx: its steps exist once tx commits,", name), "and never if it rolls back."}
	}
	params = append(params, jen.Id("w").Id(w.TypeName), jen.Id("opts").Op("...").Qual(runtimePath, "EnqueueOption"))
	run := jen.Dict{jen.Id("ID"): jen.Id("run").Dot("ID")}
	for _, s := range w.Steps {
		if !s.FanOut {
			run[jen.Id(s.Field)] = jen.Id("run").Dot("Tasks").Index(jen.Lit(s.Field))
		}
	}
	fail := jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Id(w.RunName()).Values(), jen.Err()))
	return docLines(doc...).Line().
		Func().Params(clientReceiver()).Id(name).Params(params...).Params(jen.Id(w.RunName()), jen.Error()).Block(
		jen.List(jen.Id("wf"), jen.Err()).Op(":=").Id(w.BuildFunc()).Call(jen.Id("w"), jen.Id("opts")),
		fail,
		jen.List(jen.Id("run"), jen.Err()).Op(":=").Id("c").Dot("rt").Dot(call).Call(args...),
		fail,
		jen.Return(jen.Id(w.RunName()).Values(run), jen.Nil()),
	)
}

// emitWorkflowBuild writes the builder of the runtime.Workflow of w: a
// step per field that is no fan-out, with its tag's priority and attempts
// before opts.
func emitWorkflowBuild(w *Workflow) jen.Code {
	var body, steps []jen.Code
	for _, s := range w.Steps {
		if s.FanOut {
			continue
		}
		v := "p" + s.Field
		body = append(body,
			jen.List(jen.Id(v), jen.Err()).Op(":=").Qual(runtimePath, "EncodePayload").Call(jen.Id("w").Dot(s.Field)),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Qual(runtimePath, "Workflow").Values(), jen.Err())))
		options := jen.Id("opts")
		if defaults := enqueueDefaults(s.Options); len(defaults) > 0 {
			options = jen.Append(append([]jen.Code{jen.Index().Qual(runtimePath, "EnqueueOption").Values(defaults...)}, jen.Id("opts").Op("..."))...)
		}
		step := jen.Dict{
			jen.Id("Name"):    jen.Lit(s.Field),
			jen.Id("Request"): jen.Qual(runtimePath, "Request").Values(jen.Dict{jen.Id("Type"): jen.Id(s.ConstName()), jen.Id("Payload"): jen.Id(v), jen.Id("Options"): options}),
		}
		if after := s.runtimeAfter(); len(after) > 0 {
			names := make([]jen.Code, len(after))
			for j, a := range after {
				names[j] = jen.Lit(a)
			}
			step[jen.Id("After")] = jen.Index().String().Values(names...)
		}
		if s.RunOnParentFailure {
			step[jen.Id("RunOnParentFailure")] = jen.True()
		}
		if lenient := s.runtimeLenient(); len(lenient) > 0 {
			names := make([]jen.Code, len(lenient))
			for j, a := range lenient {
				names[j] = jen.Lit(a)
			}
			step[jen.Id("RunOnFailureOf")] = jen.Index().String().Values(names...)
		}
		steps = append(steps, jen.Values(step))
	}
	body = append(body, jen.Return(jen.Qual(runtimePath, "Workflow").Values(jen.Dict{
		jen.Id("Name"):  jen.Id(w.ConstName()),
		jen.Id("Steps"): jen.Index().Qual(runtimePath, "Step").Values(steps...),
	}), jen.Nil()))
	return jen.Commentf("%s encodes w's payloads into the steps of a %s workflow.", w.BuildFunc(), w.TypeName).Line().
		Func().Id(w.BuildFunc()).Params(jen.Id("w").Id(w.TypeName), jen.Id("opts").Index().Qual(runtimePath, "EnqueueOption")).
		Params(jen.Qual(runtimePath, "Workflow"), jen.Error()).Block(body...)
}

// emitWorkflowWait writes WaitX, which waits for every step of a run,
// spawned ones included.
func emitWorkflowWait(w *Workflow) jen.Code {
	doc := docLines(fmt.Sprintf("%s blocks until every step of run has ended; a step that ended FAILED or", w.WaitName()),
		"CANCELLED returns a *runtime.TaskEndedError (errors.Is runtime.ErrTaskNotSucceeded).")
	if slices.ContainsFunc(w.Steps, func(s *Step) bool { return s.FanOut }) {
		doc = docLines(fmt.Sprintf("%s blocks until every step of run has ended, the steps a fan-out spawned", w.WaitName()),
			"included; a step that ended FAILED or CANCELLED returns a *runtime.TaskEndedError",
			"(errors.Is runtime.ErrTaskNotSucceeded).")
	}
	return doc.Line().
		Func().Params(clientReceiver()).Id(w.WaitName()).Params(ctxParam(), jen.Id("run").Id(w.RunName())).Error().
		Block(jen.Return(jen.Id("c").Dot("rt").Dot("WaitWorkflow").Call(jen.Id("ctx"), jen.Id("run").Dot("ID"))))
}

// inputs are the parents of s that have a result type: the fields of its
// Inputs struct.
func (s *Step) inputs() []*Step {
	var in []*Step
	for _, name := range s.After {
		if p := s.wf.step(name); p.ResultType != "" {
			in = append(in, p)
		}
	}
	return in
}

// inputType is the type of parent p's field in s's Inputs: its result, a
// slice of them for a fan-out, a pointer (nil when p did not succeed) for
// a step that runs on its parents' failure.
func (s *Step) inputType(p *Step) *jen.Statement {
	t := jen.Id(p.ResultType)
	if s.lenient(p.Field) {
		t = jen.Op("*").Add(t)
	}
	if p.FanOut {
		t = jen.Index().Add(t)
	}
	return t
}

// inputKey is the name DecodeParents reads parent p's result under.
func inputKey(p *Step) string {
	if p.FanOut {
		return p.Field + "/*"
	}
	return p.Field
}

// emitWorkflowHandlers writes, per workflow, the Inputs struct of each
// step whose parents have results and the XHandler interface with a
// method per step; it returns the interfaces' names for Handlers too.
func emitWorkflowHandlers(p *Package) (code, names []jen.Code) {
	for _, w := range p.Workflows {
		var methods []jen.Code
		for _, s := range w.Steps {
			params := []jen.Code{ctxParam(), jen.Id("t").Add(taskPtr()), jen.Id("p").Id(s.TypeName)}
			doc := []string{fmt.Sprintf("%s runs step %s, after its parents succeeded; an error retries it", s.HandleMethod(), s.Field),
				"with backoff unless it is runtime.Permanent, and runtime.Snooze(d) runs it again later."}
			switch {
			case s.FanOut:
				doc[0] = fmt.Sprintf("%s runs one step of fan-out %s, for an element %s returned; an error", s.HandleMethod(), s.Field, s.After[0])
				doc[1] = "retries it with backoff unless it is runtime.Permanent."
			case s.RunOnParentFailure:
				doc[0] = fmt.Sprintf("%s runs step %s once its parents ended, whether or not they succeeded;", s.HandleMethod(), s.Field)
				doc[1] = "an error retries it with backoff unless it is runtime.Permanent."
			case s.RunOnFailureOf != nil:
				doc[0] = fmt.Sprintf("%s runs step %s once its parents ended, each successfully but %s,", s.HandleMethod(), s.Field, strings.Join(s.RunOnFailureOf, " or "))
				doc[1] = "whose failure does not cancel it; an error retries it with backoff unless it is runtime.Permanent."
			}
			if in := s.inputs(); len(in) > 0 {
				fields := make([]jen.Code, len(in))
				for i, q := range in {
					what := "what step " + q.Field + " returned"
					switch {
					case q.FanOut && s.lenient(q.Field):
						what = "what each step of fan-out " + q.Field + " returned, in its order; nil for one that did not succeed"
					case q.FanOut:
						what = "what each step of fan-out " + q.Field + " returned, in its order"
					case s.lenient(q.Field):
						what += "; nil when it did not succeed"
					}
					fields[i] = jen.Id(q.Field).Add(s.inputType(q)).Comment(what)
				}
				code = append(code, jen.Commentf("%s are the results of the parents of step %s of %s.", s.InputsName(), s.Field, w.TypeName).Line().
					Type().Id(s.InputsName()).Struct(fields...))
				params = append(params, jen.Id("in").Id(s.InputsName()))
				doc = append(doc, "in holds its parents' results.")
			}
			results := jen.Error()
			switch f := s.fanOut(); {
			case f != nil:
				results = jen.Params(jen.Index().Id(f.TypeName), jen.Error())
				doc = append(doc, fmt.Sprintf("It returns the payloads of fan-out %s: a step each, stored with its completion.", f.Field))
			case s.ResultType != "":
				results = jen.Params(jen.Id(s.ResultType), jen.Error())
				doc = append(doc, fmt.Sprintf("Its %s is stored with the completion for the steps after it.", s.ResultType))
			}
			methods = append(methods, docLines(doc...).Line().Id(s.HandleMethod()).Params(params...).Add(results))
		}
		code = append(code, jen.Add(withDoc(w.Doc, fmt.Sprintf("%s handles the steps of %s workflows.", w.HandlerName(), w.TypeName))).Line().
			Type().Id(w.HandlerName()).Interface(methods...))
		names = append(names, jen.Id(w.HandlerName()))
	}
	return code, names
}

// emitWorkflowRegister writes RegisterX per workflow, which wires each
// step's task type to its method with its tag's handler options; it
// returns the calls Register makes.
func emitWorkflowRegister(p *Package) (code, calls []jen.Code) {
	for _, w := range p.Workflows {
		var body []jen.Code
		for _, s := range w.Steps {
			args := append([]jen.Code{jen.Id(s.ConstName()), jen.Id(s.AdapterFunc()).Call(jen.Id("h"))}, handlerOptions(s.Options)...)
			body = append(body, jen.If(
				jen.Err().Op(":=").Id("w").Dot("Handle").Call(args...),
				jen.Err().Op("!=").Nil(),
			).Block(jen.Return(jen.Err())))
		}
		body = append(body, jen.Return(jen.Nil()))
		code = append(code, jen.Commentf("%s wires the steps of %s workflows to h on w. Call it before the worker starts.", w.RegisterName(), w.TypeName).Line().
			Func().Id(w.RegisterName()).Params(jen.Id("w").Qual(runtimePath, "Registrar"), jen.Id("h").Id(w.HandlerName())).Error().Block(body...))
		calls = append(calls, jen.If(
			jen.Err().Op(":=").Id(w.RegisterName()).Call(jen.Id("w"), jen.Id("h")),
			jen.Err().Op("!=").Nil(),
		).Block(jen.Return(jen.Err())))
	}
	return code, calls
}

// emitWorkflowAdapters writes, per step, the runtime.HandlerFunc that
// decodes its payload and its parents' results, calls its method, and
// stores what it returns: a result, or the steps of the fan-out it feeds.
func emitWorkflowAdapters(p *Package) []jen.Code {
	var code []jen.Code
	for _, w := range p.Workflows {
		for _, s := range w.Steps {
			body := []jen.Code{
				jen.Var().Id("p").Id(s.TypeName),
				jen.If(
					jen.Err().Op(":=").Qual(runtimePath, "DecodePayload").Call(jen.Id("t"), jen.Op("&").Id("p")),
					jen.Err().Op("!=").Nil(),
				).Block(jen.Return(jen.Err())),
			}
			args := []jen.Code{jen.Id("ctx"), jen.Id("t"), jen.Id("p")}
			if in := s.inputs(); len(in) > 0 {
				into := jen.Dict{}
				for _, q := range in {
					into[jen.Lit(inputKey(q))] = jen.Op("&").Id("in").Dot(q.Field)
				}
				body = append(body,
					jen.Var().Id("in").Id(s.InputsName()),
					jen.If(
						jen.Err().Op(":=").Qual(runtimePath, "DecodeParents").Call(jen.Id("ctx"), jen.Id("t"), jen.Map(jen.String()).Any().Values(into)),
						jen.Err().Op("!=").Nil(),
					).Block(jen.Return(jen.Err())))
				args = append(args, jen.Id("in"))
			}
			call := jen.Id("h").Dot(s.HandleMethod()).Call(args...)
			switch f := s.fanOut(); {
			case f != nil:
				body = append(body, spawnCode(f, call)...)
			case s.ResultType != "":
				body = append(body,
					jen.List(jen.Id("r"), jen.Err()).Op(":=").Add(call),
					jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
					jen.Return(jen.Id("t").Dot("SetResultJSON").Call(jen.Id("r"))))
			default:
				body = append(body, jen.Return(call))
			}
			code = append(code, jen.Commentf("%s decodes step %s's payload and inputs for h.", s.AdapterFunc(), s.Field).Line().
				Func().Id(s.AdapterFunc()).Params(jen.Id("h").Id(w.HandlerName())).Qual(runtimePath, "HandlerFunc").Block(
				jen.Return(jen.Func().Params(ctxParam(), jen.Id("t").Add(taskPtr())).Error().Block(body...))))
		}
	}
	return code
}

// spawnCode calls the method of the step that feeds fan-out f and spawns
// a step of f per payload it returns:
//
//	payloads, err := h.HandleCrawlList(ctx, t, p)
//	if err != nil {
//		return err
//	}
//	reqs := make([]runtime.Request, len(payloads))
//	for i, payload := range payloads {
//		b, err := runtime.EncodePayload(payload)
//		if err != nil {
//			return runtime.Permanent(err)
//		}
//		reqs[i] = runtime.Request{Type: TaskCrawlFetch, Payload: b}
//	}
//	return t.SpawnNamed(ctx, "Fetch", reqs)
func spawnCode(f *Step, call jen.Code) []jen.Code {
	req := jen.Dict{jen.Id("Type"): jen.Id(f.ConstName()), jen.Id("Payload"): jen.Id("b")}
	if defaults := enqueueDefaults(f.Options); len(defaults) > 0 {
		req[jen.Id("Options")] = jen.Index().Qual(runtimePath, "EnqueueOption").Values(defaults...)
	}
	return []jen.Code{
		jen.List(jen.Id("payloads"), jen.Err()).Op(":=").Add(call),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
		jen.Id("reqs").Op(":=").Make(jen.Index().Qual(runtimePath, "Request"), jen.Len(jen.Id("payloads"))),
		jen.For(jen.List(jen.Id("i"), jen.Id("payload")).Op(":=").Range().Id("payloads")).Block(
			jen.List(jen.Id("b"), jen.Err()).Op(":=").Qual(runtimePath, "EncodePayload").Call(jen.Id("payload")),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Qual(runtimePath, "Permanent").Call(jen.Err()))),
			jen.Id("reqs").Index(jen.Id("i")).Op("=").Qual(runtimePath, "Request").Values(req),
		),
		jen.Return(jen.Id("t").Dot("SpawnNamed").Call(jen.Id("ctx"), jen.Lit(f.Field), jen.Id("reqs"))),
	}
}
