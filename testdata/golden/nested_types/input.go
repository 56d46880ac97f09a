package nested_types

import (
	"encoding/json"
	"net/netip"
	"time"
)

// Meta is embedded.
type Meta struct {
	Actor string
	At    time.Time
}

// Line is nested.
type Line struct {
	SKU      string
	Qty      int
	Children []*Line // recursive through a slice
}

// InvoicePayload renders an invoice.
//
//leasegen:task
type InvoicePayload struct {
	Meta
	Lines   []Line
	Totals  map[string]float64
	ByYear  map[int]int
	Due     *time.Time
	Raw     json.RawMessage
	Origin  netip.Addr // marshals itself as text
	Flags   [4]bool
	private int
	Skipped chan int `json:"-"`
}
