package rate_limits

// CallAPIPayload calls an API that allows 100 calls a minute in all.
//
//leasegen:task rate=100/1m
type CallAPIPayload struct {
	URL string `json:"url"`
}

// SyncAccountPayload syncs one account: two at a time per account, and
// at most 10 starts a second per account.
//
//leasegen:task key_concurrency=2 key_rate=10/1s
type SyncAccountPayload struct {
	Account string `json:"account" leasegen:"concurrency_key"`
}

// NotifyPayload notifies a user at most 3 times an hour, in order.
//
//leasegen:task sequential key_rate=3/1h
type NotifyPayload struct {
	UserID string `json:"user_id" leasegen:"concurrency_key"`
}

// PingPayload pings a host at most once a second, per host, without a
// concurrency limit.
//
//leasegen:task key_rate=1/1s
type PingPayload struct {
	Host string `json:"host" leasegen:"concurrency_key"`
}

// ReportPayload builds a tenant's report: tenants share the workers, so a
// tenant with a million reports queued does not hold the others back.
//
//leasegen:task fair key_rate=100/1m
type ReportPayload struct {
	Tenant string `json:"tenant" leasegen:"concurrency_key"`
}
