package not_struct

// Count is not a struct.
//
//leasegen:task
type Count int
