package bad_workflow

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
