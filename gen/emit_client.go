package gen

import (
	"fmt"

	"github.com/dave/jennifer/jen"
)

// emitClient writes the typed Client, its Enqueuer interface, Wait and,
// per task, EnqueueX, EnqueueXTx, EnqueueXBatch, EnqueueXBatchTx, the
// request builder and, for a task with a result type, WaitX.
func emitClient(p *Package) []jen.Code {
	code := []jen.Code{
		// type Client struct{ rt *runtime.Client }
		jen.Comment(fmt.Sprintf("Client enqueues the tasks of package %s with typed payloads.", p.Name)).Line().
			Type().Id("Client").Struct(jen.Id("rt").Op("*").Qual(runtimePath, "Client")),
		// func NewClient(rt *runtime.Client) *Client
		jen.Comment("NewClient returns a Client that enqueues through rt.").Line().
			Func().Id("NewClient").Params(jen.Id("rt").Op("*").Qual(runtimePath, "Client")).Op("*").Id("Client").
			Block(jen.Return(jen.Op("&").Id("Client").Values(jen.Id("rt").Op(":").Id("rt")))),
		emitEnqueuer(p),
		// var _ Enqueuer = (*Client)(nil)
		jen.Var().Id("_").Id("Enqueuer").Op("=").Parens(jen.Op("*").Id("Client")).Call(jen.Nil()),
		emitWait(),
	}
	for _, t := range p.Tasks {
		code = append(code, emitEnqueue(t), emitEnqueueTx(t), emitEnqueueBatch(t), emitEnqueueBatchTx(t), emitRequest(t))
		if t.ResultType != "" {
			code = append(code, emitWaitResult(t))
		}
	}
	return code
}

// emitWaitResult writes WaitX, which returns a task's typed result:
//
//	func (c *Client) WaitImport(ctx context.Context, id runtime.TaskID) (ImportResult, error) {
//		return runtime.WaitResult[ImportResult](ctx, c.rt, TaskImport, id)
//	}
func emitWaitResult(t *Task) jen.Code {
	return jen.Commentf("%s blocks until %s task id is finished and returns the %s its", t.WaitName(), t.ConstName(), t.ResultType).Line().
		Comment("handler returned. A task that ended FAILED or CANCELLED returns a").Line().
		Comment("*runtime.TaskEndedError (errors.Is runtime.ErrTaskNotSucceeded); a task of").Line().
		Comment("another type, runtime.ErrInvalidTask.").Line().
		Func().Params(clientReceiver()).Id(t.WaitName()).Params(ctxParam(), jen.Id("id").Qual(runtimePath, "TaskID")).
		Params(jen.Id(t.ResultType), jen.Error()).
		Block(jen.Return(jen.Qual(runtimePath, "WaitResult").Index(jen.Id(t.ResultType)).
			Call(jen.Id("ctx"), jen.Id("c").Dot("rt"), jen.Id(t.ConstName()), jen.Id("id"))))
}

// emitWait writes Client.Wait, so that a service holding the typed client
// needs no other to wait for a task. Results are strings, so a form per
// task would add nothing.
func emitWait() jen.Code {
	id := jen.Id("id").Qual(runtimePath, "TaskID")
	return jen.Comment("Wait blocks until task id is finished and returns it with its result or").Line().
		Comment("last error (runtime.Client.Wait).").Line().
		Func().Params(clientReceiver()).Id("Wait").Params(ctxParam(), id).
		Params(jen.Qual(runtimePath, "TaskInfo"), jen.Error()).
		Block(jen.Return(jen.Id("c").Dot("rt").Dot("Wait").Call(jen.Id("ctx"), jen.Id("id"))))
}

// enqueueSignatures lists the three enqueue methods of t as interface
// entries or method heads.
func enqueueSignature(name string, extra []jen.Code, payload jen.Code, results jen.Code) *jen.Statement {
	params := append([]jen.Code{ctxParam()}, extra...)
	params = append(params, payload, jen.Id("opts").Op("...").Qual(runtimePath, "EnqueueOption"))
	return jen.Id(name).Params(params...).Add(results)
}

func oneResult() jen.Code  { return jen.Params(jen.Qual(runtimePath, "TaskID"), jen.Error()) }
func manyResult() jen.Code { return jen.Params(jen.Index().Qual(runtimePath, "TaskID"), jen.Error()) }
func txParam() jen.Code    { return jen.Id("tx").Op("*").Qual(sqlPath, "Tx") }

func emitEnqueuer(p *Package) jen.Code {
	var methods []jen.Code
	for _, t := range p.Tasks {
		methods = append(methods,
			jen.Comment(fmt.Sprintf("%s enqueues a %s task.", t.EnqueueName(), t.ConstName())).Line().
				Add(enqueueSignature(t.EnqueueName(), nil, jen.Id("p").Id(t.TypeName), oneResult())),
			jen.Comment(fmt.Sprintf("%s enqueues a %s task inside tx.", t.EnqueueTxName(), t.ConstName())).Line().
				Add(enqueueSignature(t.EnqueueTxName(), []jen.Code{txParam()}, jen.Id("p").Id(t.TypeName), oneResult())),
			jen.Comment(fmt.Sprintf("%s enqueues a %s task per payload, atomically.", t.EnqueueBatchName(), t.ConstName())).Line().
				Add(enqueueSignature(t.EnqueueBatchName(), nil, jen.Id("ps").Index().Id(t.TypeName), manyResult())),
			jen.Comment(fmt.Sprintf("%s enqueues a %s task per payload inside tx.", t.EnqueueBatchTxName(), t.ConstName())).Line().
				Add(enqueueSignature(t.EnqueueBatchTxName(), []jen.Code{txParam()}, jen.Id("ps").Index().Id(t.TypeName), manyResult())),
		)
	}
	return jen.Comment("Enqueuer is the enqueue side of Client. Services depend on it, so their").Line().
		Comment("unit tests can pass a fake.").Line().
		Type().Id("Enqueuer").Interface(methods...)
}

// buildRequest is
//
//	req, err := newImportRequest(p, opts)
//	if err != nil {
//		return zero, err
//	}
func buildRequest(t *Task, zero jen.Code) []jen.Code {
	return []jen.Code{
		jen.List(jen.Id("req"), jen.Err()).Op(":=").Id(t.RequestFunc()).Call(jen.Id("p"), jen.Id("opts")),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(zero, jen.Err())),
	}
}

func clientReceiver() jen.Code { return jen.Id("c").Op("*").Id("Client") }

// emitEnqueue writes EnqueueX: build the request, then c.rt.EnqueueRequest.
func emitEnqueue(t *Task) jen.Code {
	body := buildRequest(t, jen.Lit(0))
	body = append(body, jen.Return(jen.Id("c").Dot("rt").Dot("EnqueueRequest").Call(jen.Id("ctx"), jen.Id("req"))))
	return jen.Add(withPayloadDoc(t, fmt.Sprintf("%s enqueues a %s task with payload p; opts override the annotation's defaults.", t.EnqueueName(), t.ConstName()))).Line().
		Func().Params(clientReceiver()).Add(enqueueSignature(t.EnqueueName(), nil, jen.Id("p").Id(t.TypeName), oneResult())).
		Block(body...)
}

// emitEnqueueTx writes EnqueueXTx: the same inside the caller's transaction.
func emitEnqueueTx(t *Task) jen.Code {
	body := buildRequest(t, jen.Lit(0))
	body = append(body, jen.Return(jen.Id("c").Dot("rt").Dot("EnqueueRequestTx").Call(jen.Id("ctx"), jen.Id("tx"), jen.Id("req"))))
	return jen.Comment(fmt.Sprintf("%s enqueues a %s task inside tx: workers see it once tx commits,", t.EnqueueTxName(), t.ConstName())).Line().
		Comment("and never if it rolls back.").Line().
		Func().Params(clientReceiver()).Add(enqueueSignature(t.EnqueueTxName(), []jen.Code{txParam()}, jen.Id("p").Id(t.TypeName), oneResult())).
		Block(body...)
}

// emitEnqueueBatch writes EnqueueXBatch: one request per payload, one
// atomic EnqueueMany.
func emitEnqueueBatch(t *Task) jen.Code {
	return jen.Comment(fmt.Sprintf("%s enqueues a %s task per payload, atomically and in as few", t.EnqueueBatchName(), t.ConstName())).Line().
		Comment("statements as the database allows. The ids follow the order of ps.").Line().
		Func().Params(clientReceiver()).Add(enqueueSignature(t.EnqueueBatchName(), nil, jen.Id("ps").Index().Id(t.TypeName), manyResult())).
		Block(
			batchRequests(t),
			jen.Return(jen.Id("c").Dot("rt").Dot("EnqueueMany").Call(jen.Id("ctx"), jen.Id("reqs"))),
		)
}

// batchRequests is
//
//	reqs := make([]runtime.Request, len(ps))
//	for i, p := range ps {
//		req, err := newImportRequest(p, opts)
//		if err != nil {
//			return nil, err
//		}
//		reqs[i] = req
//	}
func batchRequests(t *Task) jen.Code {
	return jen.Id("reqs").Op(":=").Make(jen.Index().Qual(runtimePath, "Request"), jen.Len(jen.Id("ps"))).Line().
		For(jen.List(jen.Id("i"), jen.Id("p")).Op(":=").Range().Id("ps")).Block(
		append(buildRequest(t, jen.Nil()), jen.Id("reqs").Index(jen.Id("i")).Op("=").Id("req"))...,
	)
}

// emitEnqueueBatchTx writes EnqueueXBatchTx: EnqueueXBatch inside the
// caller's transaction.
func emitEnqueueBatchTx(t *Task) jen.Code {
	return jen.Comment(fmt.Sprintf("%s enqueues a %s task per payload inside tx: workers see them", t.EnqueueBatchTxName(), t.ConstName())).Line().
		Comment("once tx commits, and none if it rolls back. The ids follow the order of ps.").Line().
		Func().Params(clientReceiver()).Add(enqueueSignature(t.EnqueueBatchTxName(), []jen.Code{txParam()}, jen.Id("ps").Index().Id(t.TypeName), manyResult())).
		Block(
			batchRequests(t),
			jen.Return(jen.Id("c").Dot("rt").Dot("EnqueueManyTx").Call(jen.Id("ctx"), jen.Id("tx"), jen.Id("reqs"))),
		)
}

// enqueueDefaults are the runtime.EnqueueOptions of a task's annotation, or
// of a step's leasegen tag, that every task takes: priority and attempts.
func enqueueDefaults(o options) []jen.Code {
	var defaults []jen.Code
	if o.Priority != 0 {
		defaults = append(defaults, jen.Qual(runtimePath, "WithPriority").Call(jen.Lit(o.Priority)))
	}
	if o.MaxAttempts != 0 {
		defaults = append(defaults, jen.Qual(runtimePath, "WithMaxAttempts").Call(jen.Lit(o.MaxAttempts)))
	}
	return defaults
}

// emitRequest writes newXRequest: encode the payload and put the
// annotation's defaults, the owner, the unique key and the concurrency key
// before opts.
func emitRequest(t *Task) jen.Code {
	defaults := enqueueDefaults(t.Options)
	if t.OwnerField != "" {
		defaults = append(defaults, jen.Qual(runtimePath, "WithOwner").Call(fieldString("p", t.OwnerField, t.OwnerNeedsConv)))
	}
	if t.Options.Unique {
		defaults = append(defaults, jen.Qual(runtimePath, "WithUniqueKey").Call(fieldString("p", t.KeyField, t.KeyNeedsConv)))
	}
	key := fieldString("p", t.ConcurrencyKeyField, t.ConcurrencyKeyNeedsConv)
	switch {
	case t.Options.Sequential:
		rule := "SequenceContinue"
		if t.Options.BlockOnFailure {
			rule = "SequenceBlock"
		}
		defaults = append(defaults, jen.Qual(runtimePath, "WithSequentialKey").Call(key, jen.Qual(runtimePath, rule)))
	case t.Options.KeyConcurrency > 0:
		defaults = append(defaults, jen.Qual(runtimePath, "WithConcurrencyKey").Call(key, jen.Lit(t.Options.KeyConcurrency)))
	}
	if r := t.Options.KeyRate; r.Limit > 0 {
		defaults = append(defaults, jen.Qual(runtimePath, "WithKeyRate").Call(key, jen.Lit(r.Limit), durationCode(r.Window)))
	}
	if t.Options.Fair {
		defaults = append(defaults, jen.Qual(runtimePath, "WithFairnessKey").Call(key, jen.Lit(1)))
	}
	options := jen.Id("opts")
	if len(defaults) > 0 {
		options = jen.Append(append([]jen.Code{jen.Index().Qual(runtimePath, "EnqueueOption").Values(defaults...)}, jen.Id("opts").Op("..."))...)
	}
	var checks []jen.Code
	if t.Options.Idempotent && t.KeyField != "" {
		// if p.OrderID == "" { return runtime.Request{}, fmt.Errorf("%w: ...", runtime.ErrInvalidTask) }
		checks = append(checks, jen.If(jen.Add(fieldString("p", t.KeyField, t.KeyNeedsConv)).Op("==").Lit("")).Block(
			jen.Return(jen.Qual(runtimePath, "Request").Values(), jen.Qual("fmt", "Errorf").Call(
				jen.Lit(fmt.Sprintf("%%w: %s is idempotent by its key %s, which is empty: set it, or a second task for the same work does it again", t.Name, t.KeyField)),
				jen.Qual(runtimePath, "ErrInvalidTask"))),
		))
	}
	return jen.Commentf("%s encodes p and applies the annotation's defaults, then opts.", t.RequestFunc()).Line().
		Func().Id(t.RequestFunc()).Params(jen.Id("p").Id(t.TypeName), jen.Id("opts").Index().Qual(runtimePath, "EnqueueOption")).
		Params(jen.Qual(runtimePath, "Request"), jen.Error()).
		Block(append(checks,
			jen.List(jen.Id("payload"), jen.Err()).Op(":=").Qual(runtimePath, "EncodePayload").Call(jen.Id("p")),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Qual(runtimePath, "Request").Values(), jen.Err())),
			jen.Return(jen.Qual(runtimePath, "Request").Values(jen.Dict{
				jen.Id("Type"):    jen.Id(t.ConstName()),
				jen.Id("Payload"): jen.Id("payload"),
				jen.Id("Options"): options,
			}), jen.Nil()),
		)...)
}

// fieldString is p.Field, or string(p.Field) for a named string type.
func fieldString(v, field string, conv bool) jen.Code {
	sel := jen.Id(v).Dot(field)
	if conv {
		return jen.String().Call(sel)
	}
	return sel
}
