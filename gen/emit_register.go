package gen

import (
	"strings"

	"github.com/dave/jennifer/jen"
)

// emitRegister writes, per task, RegisterX, which wires the task to its
// handler with the annotation's worker-side options, and Register, which
// calls them all:
//
//	func RegisterImport(w runtime.Registrar, h ImportHandler) error {
//		return w.Handle(TaskImport, handleImport(h), runtime.WithTimeout(5*time.Minute))
//	}
//
//	func Register(w runtime.Registrar, h Handlers) error {
//		if err := RegisterImport(w, h); err != nil {
//			return err
//		}
//		return nil
//	}
func emitRegister(p *Package) []jen.Code {
	var code, body []jen.Code
	for _, t := range p.Tasks {
		args := append([]jen.Code{jen.Id(t.ConstName()), jen.Id(t.AdapterFunc()).Call(jen.Id("h"))}, handlerOptions(t.Options)...)
		code = append(code, jen.Commentf("%s wires %s tasks to h on w, with the options of the annotation;", t.RegisterName(), t.ConstName()).Line().
			Comment("a worker dedicated to them registers only this. Call it before the worker starts.").Line().
			Func().Id(t.RegisterName()).Params(jen.Id("w").Qual(runtimePath, "Registrar"), jen.Id("h").Id(t.HandlerName())).Error().
			Block(jen.Return(jen.Id("w").Dot("Handle").Call(args...))))
		body = append(body, jen.If(
			jen.Err().Op(":=").Id(t.RegisterName()).Call(jen.Id("w"), jen.Id("h")),
			jen.Err().Op("!=").Nil(),
		).Block(jen.Return(jen.Err())))
	}
	workflows, calls := emitWorkflowRegister(p)
	code = append(code, workflows...)
	body = append(body, calls...)
	body = append(body, jen.Return(jen.Nil()))
	return append(code,
		jen.Commentf("Register wires every %s of package %s to h on w, with the options of its", p.handledNoun(), p.Name).Line().
			Comment("annotation. w is a *runtime.Worker, or a test harness; call it before the worker starts.").Line().
			Func().Id("Register").Params(jen.Id("w").Qual(runtimePath, "Registrar"), jen.Id("h").Id("Handlers")).Error().
			Block(body...),
	)
}

// handlerOptions are the runtime.HandlerOptions of a task's annotation, or
// of a step's leasegen tag.
func handlerOptions(o options) []jen.Code {
	var opts []jen.Code
	if o.Timeout > 0 {
		opts = append(opts, jen.Qual(runtimePath, "WithTimeout").Call(durationCode(o.Timeout)))
	}
	if o.Lease > 0 {
		opts = append(opts, jen.Qual(runtimePath, "WithLease").Call(durationCode(o.Lease)))
	}
	if o.Concurrency > 0 {
		opts = append(opts, jen.Qual(runtimePath, "WithConcurrency").Call(jen.Lit(o.Concurrency)))
	}
	if o.Rate.Limit > 0 {
		opts = append(opts, jen.Qual(runtimePath, "WithRate").Call(jen.Lit(o.Rate.Limit), durationCode(o.Rate.Window)))
	}
	if o.Backoff > 0 {
		opts = append(opts, jen.Qual(runtimePath, "WithBackoff").Call(jen.Qual(runtimePath, "Exponential").Call(durationCode(o.Backoff))))
	}
	if o.Periodic() {
		opts = append(opts, jen.Qual(runtimePath, "WithSchedule").Call(periodicCode(o)))
	}
	return opts
}

// periodicCode is the runtime.Periodic of o's schedule, with each tick's
// priority and attempts from the annotation.
func periodicCode(o options) jen.Code {
	fields := jen.Dict{}
	if o.Cron != "" {
		fields[jen.Id("Cron")] = jen.Lit(o.Cron)
	}
	if o.Zone != "" {
		fields[jen.Id("Zone")] = jen.Lit(o.Zone)
	}
	if o.Every != 0 {
		fields[jen.Id("Every")] = durationCode(o.Every)
	}
	if o.Misfire != "" {
		fields[jen.Id("Misfire")] = jen.Lit(o.Misfire)
	}
	if o.SkipOverlap {
		fields[jen.Id("SkipOverlap")] = jen.True()
	}
	if o.Payload != "" {
		payload := jen.Lit(o.Payload)
		if !strings.Contains(o.Payload, "`") {
			payload = jen.Id("`" + o.Payload + "`") // JSON reads better unescaped
		}
		fields[jen.Id("Payload")] = jen.Index().Byte().Call(payload)
	}
	if o.Priority != 0 {
		fields[jen.Id("Priority")] = jen.Lit(o.Priority)
	}
	if o.MaxAttempts != 0 {
		fields[jen.Id("MaxAttempts")] = jen.Lit(o.MaxAttempts)
	}
	return jen.Qual(runtimePath, "Periodic").Values(fields)
}
