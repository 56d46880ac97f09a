package bad_rates

// APayload has rates the generator refuses.
//
//leasegen:task rate=0/1s key_rate=5 key_concurrency=2
type APayload struct {
	Key string `json:"key" leasegen:"concurrency_key"`
}

// BPayload has a window below a millisecond and too many starts.
//
//leasegen:task rate=5/1500us key_rate=20000/1h key_concurrency=1
type BPayload struct {
	Key string `json:"key" leasegen:"concurrency_key"`
}
