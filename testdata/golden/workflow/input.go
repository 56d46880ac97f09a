package workflow

import "github.com/leasegen/leasegen/runtime"

// CreateAccount opens the account.
type CreateAccount struct {
	Email string `json:"email"`
}

// AccountID is what CreateAccount's step returns.
type AccountID struct {
	ID int64 `json:"id"`
}

// VerifyEmail sends the verification mail.
type VerifyEmail struct {
	Template string `json:"template"`
}

// Welcome greets the customer once both are done.
type Welcome struct {
	Text string `json:"text"`
}

// Onboard signs a customer up: the account, then the mail, then the
// welcome, which reads the account's id.
//
//leasegen:workflow
type Onboard struct {
	Create  CreateAccount `result:"AccountID"`
	Verify  VerifyEmail   `after:"Create" result:"bool"`
	Welcome Welcome       `after:"Create,Verify"`
}

// NotifyPayload is a plain task beside the workflow.
//
//leasegen:task
type NotifyPayload struct {
	To string `json:"to"`
}

// ListPages lists the pages of a site.
type ListPages struct {
	Site string `json:"site"`
}

// FetchPage fetches one page.
type FetchPage struct {
	URL string `json:"url"`
}

// Page is what a FetchPage step returns.
type Page struct {
	Bytes int `json:"bytes"`
}

// IndexSite indexes what the fetches returned.
type IndexSite struct{}

// Report reports, whatever happened.
type Report struct{}

// Crawl fetches a site's pages in parallel and indexes them, and then
// reports even when the indexing failed.
//
//leasegen:workflow
type Crawl struct {
	List   ListPages                 `leasegen:"max_attempts=3 timeout=30s"`
	Fetch  runtime.FanOut[FetchPage] `after:"List" result:"Page" leasegen:"concurrency=4 priority=2"`
	Index  IndexSite                 `after:"Fetch" result:"int"`
	Report Report                    `after:"Fetch,Index" leasegen:"run_on_parent_failure=Index"`
}
