package interface_field

// AnyPayload holds anything.
//
//leasegen:task
type AnyPayload struct {
	Value any
	Inner struct {
		Err error
	}
}
