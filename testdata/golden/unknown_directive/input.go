package unknown_directive

// TypoPayload misspells the directive.
//
//leasegen:tsk
type TypoPayload struct{}
