package key_limits_never_bind

// SyncPayload limits each key no tighter than the whole type.
//
//leasegen:task rate=5/1m key_rate=10/1s concurrency=3 key_concurrency=3
type SyncPayload struct {
	Account string `json:"account" leasegen:"concurrency_key"`
}
