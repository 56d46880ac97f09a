package concurrency_key

// AccountID names a customer account.
type AccountID string

// SyncPayload syncs one account with a partner API: at most two syncs of
// an account run at once.
//
//leasegen:task key_concurrency=2
type SyncPayload struct {
	Account AccountID `json:"account" leasegen:"concurrency_key"`
}

// PostingPayload posts one ledger entry: a ledger's entries post one at a
// time, in the order they were enqueued, and a failed one holds the rest.
//
//leasegen:task sequential=block
type PostingPayload struct {
	Ledger string `json:"ledger" leasegen:"concurrency_key"`
	Cents  int64  `json:"cents"`
}

// NotePayload appends a note; a failed one lets the next start.
//
//leasegen:task sequential
type NotePayload struct {
	Thread string `json:"thread" leasegen:"concurrency_key"`
}
