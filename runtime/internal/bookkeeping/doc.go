// Package bookkeeping holds the runtime's algorithms over the bookkeeping
// tables (workers, schedules, attempts, throughput, queue statistics),
// written once over driver.Tables for every engine. Each engine's driver
// runs the queries; what they mean together is decided here.
package bookkeeping
