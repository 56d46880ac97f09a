package unique_key

// ReportID names a report.
type ReportID string

// ReportPayload builds a report; enqueueing the same report twice is a no-op.
//
//leasegen:task unique
type ReportPayload struct {
	ID ReportID `json:"id" leasegen:"key"`
}
