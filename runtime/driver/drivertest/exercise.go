package drivertest

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// Exercise runs the conformance suite on the engine of h: every case of
// the lease protocol (claims, leases, fencing, limits, recovery,
// cancellation, idempotency, retention, the worker registry, kill -9 of
// worker processes) and, where h can cut connections or owns a server, the
// faults, each in a parallel subtest on a database of its own. A driver's
// package runs it from one test:
//
//	func TestConformance(t *testing.T) { drivertest.Exercise(t, &harness) }
//
// The kill -9 case runs the test binary again as its worker processes:
// there Exercise runs one worker until it is killed, and no tests.
func Exercise(t *testing.T, h *Harness) {
	if err := h.validate(); err != nil {
		t.Fatal(err)
	}
	h.root = strings.Split(t.Name(), "/")[0]
	if os.Getenv(envChaosWorker) != "" {
		if os.Getenv(envChaosMode) == chaosModePeriodic {
			os.Exit(periodicWorkerMain(h))
		}
		os.Exit(chaosWorkerMain(h))
	}
	t.Parallel()
	run := func(name string, fn func(t *testing.T)) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fn(t)
		})
	}
	for _, c := range bundleCases {
		run(c.name, func(t *testing.T) { c.run(t, Setup(t, h)) })
	}
	for _, c := range harnessCases {
		run(c.name, func(t *testing.T) { c.run(t, h) })
	}
	if h.networked() {
		for _, c := range networkCases {
			run(c.name, func(t *testing.T) { c.run(t, Setup(t, h)) })
		}
	}
	if h.PrivateServer != nil {
		for _, c := range serverCases {
			run(c.name, func(t *testing.T) { c.run(t, h) })
		}
	}
}

// validate reports a harness that lacks what every case needs.
func (h *Harness) validate() error {
	var missing []string
	for name, ok := range map[string]bool{
		"Name": h.Name != "", "NewDatabase": h.NewDatabase != nil, "Open": h.Open != nil, "New": h.New != nil,
		"ExpireSQL": h.ExpireSQL != "", "MillisUntilSQL": h.MillisUntilSQL != "",
		"Stallable (or ServerAddr and WithServerAddr)": h.Stallable != nil || h.networked(),
	} {
		if !ok {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("drivertest: the harness lacks %s", strings.Join(missing, ", "))
	}
	return nil
}

// bundleCases run on a migrated engine of a fresh database.
var bundleCases = []struct {
	name string
	run  func(*testing.T, *Bundle)
}{
	{"WorkerCompletesTask", testWorkerCompletesTask},
	{"ClaimOrderAndAvailability", testClaimOrderAndAvailability},
	{"ConcurrentClaimsAreDisjoint", testConcurrentClaimsAreDisjoint},
	{"FenceRejectsStaleExecution", testFenceRejectsStaleExecution},
	{"RenewReportsEachLease", testRenewReportsEachLease},
	{"RecoveryOutcomes", testRecoveryOutcomes},
	{"ReleaseDoesNotUseAnAttempt", testReleaseDoesNotUseAnAttempt},
	{"ClaimHonoursLimits", testClaimHonoursLimits},
	{"CompleteManyFencesEachRow", testCompleteManyFencesEachRow},
	{"WorkerRetriesThenSucceeds", testWorkerRetriesThenSucceeds},
	{"WorkerFailsAfterLastAttempt", testWorkerFailsAfterLastAttempt},
	{"WorkerRecordsPanicWithStack", testWorkerRecordsPanicWithStack},
	{"WorkerSnoozeKeepsAttempts", testWorkerSnoozeKeepsAttempts},
	{"CancelQueuedTaskNeverRuns", testCancelQueuedTaskNeverRuns},
	{"CancelRequestReachesRunningHandler", testCancelRequestReachesRunningHandler},
	{"MaxExecutionTime", testMaxExecutionTime},
	{"StopDrainsWhileRenewing", testStopDrainsWhileRenewing},
	{"StopTimeoutReleases", testStopTimeoutReleases},
	{"StopIsBoundedWhenHandlerIgnoresContext", testStopIsBoundedWhenHandlerIgnoresContext},
	{"UnknownTypeStaysQueued", testUnknownTypeStaysQueued},
	{"EnqueueStoresOptions", testEnqueueStoresOptions},
	{"EnqueueManyStoresOptions", testEnqueueManyStoresOptions},
	{"EnqueueManyConcurrentIDs", testEnqueueManyConcurrentIDs},
	{"EnqueueIdempotencyKey", testEnqueueIdempotencyKey},
	{"EnqueueTx", testEnqueueTx},
	{"EnqueueRejectsOversizedInput", testEnqueueRejectsOversizedInput},
	{"GetListCancel", testGetListCancel},
	{"EnqueueRejectsBadInput", testEnqueueRejectsBadInput},
	{"AdminListRetryStats", testAdminListRetryStats},
	{"ReleasedTaskInfo", testReleasedTaskInfo},
	{"RetentionAndPurge", testRetentionAndPurge},
	{"RunIdempotentSkipsRecordedKey", testRunIdempotentSkipsRecordedKey},
	{"RunIdempotentLostLeaseRollsBack", testRunIdempotentLostLeaseRollsBack},
	{"WithLeaseSetsTheTypesLease", testWithLeaseSetsTheTypesLease},
	{"WorkerRegistry", testWorkerRegistry},
	{"WorkerRegistryDeadRows", testWorkerRegistryDeadRows},
	{"WorkerClockSkewDoesNotMatter", testWorkerClockSkewDoesNotMatter},
	{"SelfFencingWhenRenewalsFail", testSelfFencingWhenRenewalsFail},
	{"FailuresAreLogged", testFailuresAreLogged},
	{"HandlerReturningAfterStopIsNotAFailure", testHandlerReturningAfterStopIsNotAFailure},
	{"ManyWorkersOneProcess", testManyWorkersOneProcess},
	{"PipelineRunsAheadWithinSlots", testPipelineRunsAheadWithinSlots},
	{"AttemptHistory", testAttemptHistory},
	{"BoundedStats", testBoundedStats},
	{"ThroughputPerMinute", testThroughputPerMinute},
	{"Kill9WorkerProcesses", testKill9WorkerProcesses},
	{"ShortLeaseKeepsItsLease", testShortLeaseKeepsItsLease},
	{"WorkOne", testWorkOne},
	{"ClientWait", testClientWait},
	{"MetadataReachesHandler", testMetadataReachesHandler},
	{"UnreadableMetadataFailsTask", testUnreadableMetadataFailsTask},
	{"PauseSkipsClaims", testPauseSkipsClaims},
	{"PausedTypeWaitsForResume", testPausedTypeWaitsForResume},
	{"SchedulesRegisterAndFire", testSchedulesRegisterAndFire},
	{"ScheduleFiresOnceUnderRace", testScheduleFiresOnceUnderRace},
	{"ScheduleRedefinePauseDelete", testScheduleRedefinePauseDelete},
	{"ScheduleSeesLastTaskActive", testScheduleSeesLastTaskActive},
	{"WorkerFiresSchedule", testWorkerFiresSchedule},
	{"TablesInTxSerializesRegistry", testTablesInTxSerializesRegistry},
	{"TablesRegistryPausedAttempts", testTablesRegistryPausedAttempts},
}

// harnessCases set up their databases themselves.
var harnessCases = []struct {
	name string
	run  func(*testing.T, *Harness)
}{
	{"StartRefusesMissingSchema", testStartRefusesMissingSchema},
	{"MigrateConcurrentAndIdempotent", testMigrateConcurrentAndIdempotent},
	{"PeriodicKill9AndRestart", testPeriodicKill9AndRestart},
}

// networkCases cut a worker's or a client's connection through a proxy.
var networkCases = []struct {
	name string
	run  func(*testing.T, *Bundle)
}{
	{"FaultOneWorkerCutOff", testFaultOneWorkerCutOff},
	{"EnqueueOutcomeUnknown", testEnqueueOutcomeUnknown},
}

// serverCases kill and freeze a private server.
var serverCases = []struct {
	name string
	run  func(*testing.T, *Harness)
}{
	{"OutageLogsOnceAndBacksOff", testOutageLogsOnceAndBacksOff},
	{"FaultDatabaseRestart", testFaultDatabaseRestart},
	{"FaultDatabaseStall", testFaultDatabaseStall},
}
