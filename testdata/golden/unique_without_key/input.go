package unique_without_key

// OncePayload is unique but has no key.
//
//leasegen:task unique
type OncePayload struct {
	ID string
}
