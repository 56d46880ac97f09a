package bad_schedule

// APayload has a schedule that cannot run, in a zone that does not exist.
//
//leasegen:task cron="0 25 * * *" tz=Europe/Berln
type APayload struct{}

// BPayload mixes the two kinds of schedule.
//
//leasegen:task cron="@daily" every=1h misfire=sometimes overlap=never
type BPayload struct{}

// CPayload has policies without a schedule and a payload that is no JSON.
//
//leasegen:task misfire=skip payload='{region:eu}' tz=UTC
type CPayload struct{}

// DPayload has a zone on an interval.
//
//leasegen:task every=1h tz=UTC
type DPayload struct{}

// EPayload runs on a date that never comes.
//
//leasegen:task cron="0 0 30 2 *"
type EPayload struct{}

// FPayload does not close its quote.
//
//leasegen:task every=500ms cron="0 0 * * *
type FPayload struct{}
