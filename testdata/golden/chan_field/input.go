package chan_field

// StreamPayload has a channel.
//
//leasegen:task
type StreamPayload struct {
	Done chan struct{}
}
