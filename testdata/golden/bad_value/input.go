package bad_value

// SlowPayload has bad option values.
//
//leasegen:task max_attempts=0 timeout=soon priority=high lease=1ms name=Bad_Name idempotent=yes
type SlowPayload struct{}
