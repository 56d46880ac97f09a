package duplicate_name

// APayload is one task.
//
//leasegen:task name=work
type APayload struct{ N int }

// BPayload claims the same name.
//
//leasegen:task name=work
type BPayload struct{ N int }
