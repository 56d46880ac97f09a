package duplicate_option

// TwicePayload sets priority twice.
//
//leasegen:task priority=1 priority=2
type TwicePayload struct{}
