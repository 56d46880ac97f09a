package bad_workflow

import "github.com/leasegen/leasegen/runtime"

type A struct{ X int }

type B struct{ Y int }

//leasegen:workflow
type Unknown struct {
	First  A
	Second B `after:"Frist"`
}

//leasegen:workflow
type Cycle struct {
	One   A `after:"Three"`
	Two   B `after:"One"`
	Three A `after:"Two"`
}

//leasegen:workflow
type Self struct {
	Only A `after:"Only"`
}

//leasegen:workflow
type BadResult struct {
	Step A `result:"Reslt"`
}

//leasegen:workflow
type NotAStep struct {
	Step  string
	other A
}

//leasegen:workflow
type Empty struct{}

//leasegen:workflow name=x
type Options struct {
	Step A
}

//leasegen:workflow
type FanOutTwoParents struct {
	First  A
	Second B
	Many   runtime.FanOut[A] `after:"First,Second"`
}

//leasegen:workflow
type FanOutOfFanOut struct {
	First A
	Many  runtime.FanOut[A] `after:"First"`
	More  runtime.FanOut[B] `after:"Many"`
}

//leasegen:workflow
type SpawnerWithResult struct {
	First A                 `result:"B"`
	Many  runtime.FanOut[A] `after:"First"`
}

//leasegen:workflow
type SpawnerOfTwo struct {
	First A
	Many  runtime.FanOut[A] `after:"First"`
	Other runtime.FanOut[B] `after:"First"`
}

//leasegen:workflow
type JoinMissesFanOut struct {
	First A
	Many  runtime.FanOut[A] `after:"First"`
	Join  B                 `after:"First"`
}

//leasegen:workflow
type StepOptions struct {
	First  A                 `leasegen:"unique max_attemps=3"`
	Second B                 `leasegen:"timeout=soon"`
	Many   runtime.FanOut[A] `after:"Second" leasegen:"run_on_parent_failure"`
	Third  A                 `after:"Second" leasegen:"run_on_parent_failure=First"`
}
