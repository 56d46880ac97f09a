package custom_name

// sendEmailPayload sends one email; the type is unexported, the API is not.
//
//leasegen:task name=mail.send
type sendEmailPayload struct {
	To      string
	Subject string
}

// HTTPCallPayload calls a webhook.
//
//leasegen:task
type HTTPCallPayload struct {
	URL string
}

var _ = sendEmailPayload{}
