package idempotent_key

// ChargePayload charges a card once per order.
//
//leasegen:task idempotent max_attempts=8
type ChargePayload struct {
	OrderID  string `json:"order_id" leasegen:"key"`
	Customer string `json:"customer" leasegen:"owner"`
	Cents    int64  `json:"cents"`
}
