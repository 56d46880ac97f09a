package grouped_decl

type (
	// WelcomePayload greets a new user.
	//
	//leasegen:task priority=5
	WelcomePayload struct {
		UserID int64 `json:"user_id"`
	}

	// helper is not a task.
	helper struct{ n int }

	// FarewellPayload says goodbye.
	//
	//leasegen:task
	FarewellPayload struct {
		UserID int64 `json:"user_id"`
	}
)

var _ = helper{}.n
