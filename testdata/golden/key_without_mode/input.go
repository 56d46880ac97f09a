package key_without_mode

// KeyedPayload tags a key but neither deduplicates nor skips.
//
//leasegen:task
type KeyedPayload struct {
	ID string `leasegen:"key"`
}
