package workflow

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
