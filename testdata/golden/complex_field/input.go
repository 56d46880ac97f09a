package complex_field

// SignalPayload holds a complex number.
//
//leasegen:task
type SignalPayload struct {
	Phase complex128
}
