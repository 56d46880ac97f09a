package periodic

// NightlyReportPayload builds the report of the day before, at 03:00 in
// Berlin; a run missed by an outage runs once.
//
//leasegen:task name=nightly_report cron="0 3 * * *" tz=Europe/Berlin misfire=once overlap=skip priority=5 max_attempts=3
type NightlyReportPayload struct {
	Region string `json:"region"`
}

// SyncPayload syncs every quarter of an hour, with a fixed payload.
//
//leasegen:task every=15m misfire=backfill:4 payload='{"full":false}'
type SyncPayload struct {
	Full bool `json:"full"`
}
