package all_options

// SyncPayload mirrors an account.
//
//leasegen:task name=accounts.sync priority=-3 max_attempts=12 timeout=90s lease=45s backoff=250ms concurrency=4 idempotent unique
type SyncPayload struct {
	AccountID string `json:"account_id" leasegen:"key"`
	Tenant    string `json:"tenant" leasegen:"owner"`
}
