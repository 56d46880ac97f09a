package results

import "time"

// ImportResult is what an import produced.
type ImportResult struct {
	Rows     int       `json:"rows"`
	Files    []string  `json:"files"`
	Finished time.Time `json:"finished"`
}

// ImportPayload imports a file; its handler returns an ImportResult.
//
//leasegen:task result=ImportResult
type ImportPayload struct {
	URL string `json:"url"`
}

// ChargePayload charges an order once; its handler returns the charge id,
// committed with its writes.
//
//leasegen:task idempotent result=string
type ChargePayload struct {
	OrderID string `json:"order_id" leasegen:"key"`
}

// NotifyPayload has no result.
//
//leasegen:task
type NotifyPayload struct {
	To string `json:"to"`
}
