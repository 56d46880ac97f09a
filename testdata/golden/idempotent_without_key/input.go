package idempotent_without_key

// SyncPayload commits its writes with its completion, but has no key to
// tell one sync's work from another's.
//
//leasegen:task idempotent
type SyncPayload struct {
	Account string `json:"account"`
}
