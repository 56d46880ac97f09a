package concurrency_key_without_field

// SyncPayload limits per key but tags no key field.
//
//leasegen:task key_concurrency=1
type SyncPayload struct {
	Account string `json:"account"`
}
