package bad_tick_payload

import "time"

// DayPayload gives a number to a string field.
//
//leasegen:task every=1h payload='{"day":7}'
type DayPayload struct {
	Day string `json:"day"`
}

// RegionPayload names a field the type lacks.
//
//leasegen:task every=1h payload='{"region":"eu","zone":"b"}'
type RegionPayload struct {
	Region string `json:"region"`
}

// RetryPayload overflows an int8, deep inside.
//
//leasegen:task every=1h payload='{"Plan":{"Steps":[1,2,300]}}'
type RetryPayload struct {
	Plan struct{ Steps []int8 }
}

// FinePayload decodes: case-folded names, a promoted field, a map, a
// time, null and base64 bytes.
//
//leasegen:task every=1h payload='{"region":"eu","Limits":{"a":1},"since":"2026-01-01T00:00:00Z","note":null,"blob":"aGk=","id":3}'
type FinePayload struct {
	Region string
	Limits map[string]int
	Since  time.Time `json:"since"`
	Note   *string   `json:"note"`
	Blob   []byte    `json:"blob"`
	inner
}

type inner struct {
	ID int `json:"id"`
}
