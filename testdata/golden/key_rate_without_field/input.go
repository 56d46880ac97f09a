package key_rate_without_field

// MailPayload has a rate per key but no key.
//
//leasegen:task key_rate=5/1m
type MailPayload struct {
	To string `json:"to"`
}
