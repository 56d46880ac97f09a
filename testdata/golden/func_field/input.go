package func_field

// CallbackPayload has a function.
//
//leasegen:task
type CallbackPayload struct {
	OnDone func() error
}
