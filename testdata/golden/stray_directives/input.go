package stray

// PingPayload is a task with a lease short enough to warn about.
//
//leasegen:task lease=500ms
type PingPayload struct {
	Host string `json:"host"`
}

// SpacedPayload looks annotated, but the space makes it a plain comment.
//
// leasegen:task
type SpacedPayload struct {
	ID string `json:"id"`
}

//leasegen:task

// DetachedPayload's directive is cut off by a blank line.
type DetachedPayload struct {
	ID string `json:"id"`
}

/* leasegen:task */
type BlockPayload struct {
	ID string `json:"id"`
}
