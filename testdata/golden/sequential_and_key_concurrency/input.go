package sequential_and_key_concurrency

// SyncPayload asks for two contradictory rules.
//
//leasegen:task key_concurrency=3 sequential=sometimes
type SyncPayload struct {
	Account string `json:"account" leasegen:"concurrency_key"`
}
