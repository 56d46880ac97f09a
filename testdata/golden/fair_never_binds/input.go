package fair_never_binds

// SyncPayload asks for fairness where a key queues at most 2 tasks.
//
//leasegen:task fair key_concurrency=2
type SyncPayload struct {
	Account string `json:"account" leasegen:"concurrency_key"`
}

// PostPayload asks for fairness of a sequence.
//
//leasegen:task sequential fair
type PostPayload struct {
	Ledger string `json:"ledger" leasegen:"concurrency_key"`
}
