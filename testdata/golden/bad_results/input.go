package bad_results

// ImportResult is what an import produced.
type ImportResult struct {
	Rows int `json:"rows"`
}

// Report cannot round-trip through JSON.
type Report struct {
	Done chan bool
}

// Alias stands for ImportResult.
type Alias = ImportResult

// APayload names a type that does not exist.
//
//leasegen:task result=ImportResults
type APayload struct{}

// BPayload's result does not encode.
//
//leasegen:task result=Report
type BPayload struct{}

// CPayload names no type at all.
//
//leasegen:task result=map[string]int
type CPayload struct{}

// DPayload names an alias.
//
//leasegen:task result=Alias
type DPayload struct{}

// EPayload names a function.
//
//leasegen:task result=helper
type EPayload struct{}

func helper() {}
