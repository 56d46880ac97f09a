package key_not_string

// NumberedPayload has an integer key and a misspelled tag.
//
//leasegen:task unique
type NumberedPayload struct {
	ID    int64  `leasegen:"key"`
	Owner string `leasegen:"ownr"`
}
