package concurrency_key_without_limit

// SyncPayload tags a concurrency key but sets no limit.
//
//leasegen:task
type SyncPayload struct {
	Account string `json:"account" leasegen:"concurrency_key"`
}
