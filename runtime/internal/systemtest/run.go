package systemtest

import (
	"os"
	"strings"
	"testing"

	"github.com/leasegen/leasegen/runtime/driver/drivertest"
)

// root is the top-level test that runs Run: the kill -9 and worker host
// cases run the test binary again with it as the worker processes. A test
// binary runs one driver's suite, from a test named TestSystem by
// convention, which cases exported to a driver's own tests (HostCutOff)
// count on.
var root = "TestSystem"

// Run runs the runtime's system suite on the engine of h: workers and
// clients through the runtime (retries, cancellation, stops, idempotent
// handlers, the worker registry, attempts, pause, schedules), the ledger
// of many workers, kill -9 of worker processes and, where h can cut
// connections or owns a server, the faults, each in a parallel subtest on
// a database of its own. A driver's package runs it from one test:
//
//	func TestSystem(t *testing.T) { systemtest.Run(t, &harness) }
//
// The kill -9 cases run the test binary again as their worker processes:
// there Run runs one worker until it is killed, and no tests.
func Run(t *testing.T, h *drivertest.Harness) {
	if err := h.Validate(); err != nil {
		t.Fatal(err)
	}
	root = strings.Split(t.Name(), "/")[0]
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
	if h.Networked() {
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

// RunEngineIndependent runs the cases of the system suite that the
// runtime decides alone, whatever the engine, on the engine of h. The
// runtime's own tests run it once, on SQLite:
//
//	func TestEngineIndependent(t *testing.T) { systemtest.RunEngineIndependent(t, &sqlite) }
func RunEngineIndependent(t *testing.T, h *drivertest.Harness) {
	t.Parallel()
	for _, c := range engineIndependentCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, Setup(t, h))
		})
	}
}

// bundleCases run on a migrated engine of a fresh database.
var bundleCases = []struct {
	name string
	run  func(*testing.T, *Bundle)
}{
	{"WorkerCompletesTask", testWorkerCompletesTask},
	{"Results", testResults},
	{"WorkerRetriesThenSucceeds", testWorkerRetriesThenSucceeds},
	{"WorkerFailsAfterLastAttempt", testWorkerFailsAfterLastAttempt},
	{"WorkerSnoozeKeepsAttempts", testWorkerSnoozeKeepsAttempts},
	{"CancelQueuedTaskNeverRuns", testCancelQueuedTaskNeverRuns},
	{"CancelRequestReachesRunningHandler", testCancelRequestReachesRunningHandler},
	{"MaxExecutionTime", testMaxExecutionTime},
	{"StopDrainsWhileRenewing", testStopDrainsWhileRenewing},
	{"StopTimeoutReleases", testStopTimeoutReleases},
	{"UnknownTypeStaysQueued", testUnknownTypeStaysQueued},
	{"EnqueueStoresOptions", testEnqueueStoresOptions},
	{"EnqueueManyStoresOptions", testEnqueueManyStoresOptions},
	{"EnqueueManyConcurrentIDs", testEnqueueManyConcurrentIDs},
	{"EnqueueIdempotencyKey", testEnqueueIdempotencyKey},
	{"EnqueueTx", testEnqueueTx},
	{"EnqueueRejectsOversizedInput", testEnqueueRejectsOversizedInput},
	{"GetListCancel", testGetListCancel},
	{"AdminListRetryStats", testAdminListRetryStats},
	{"ListFinished", testListFinished},
	{"ReleasedTaskInfo", testReleasedTaskInfo},
	{"RetentionAndPurge", testRetentionAndPurge},
	{"BulkActionsByFilter", testBulkActionsByFilter},
	{"RunIdempotentSkipsRecordedKey", testRunIdempotentSkipsRecordedKey},
	{"RunIdempotentLostLeaseRollsBack", testRunIdempotentLostLeaseRollsBack},
	{"WithLeaseSetsTheTypesLease", testWithLeaseSetsTheTypesLease},
	{"WorkerRegistry", testWorkerRegistry},
	{"WorkerRegistryDeadRows", testWorkerRegistryDeadRows},
	{"WorkerClockSkewDoesNotMatter", testWorkerClockSkewDoesNotMatter},
	{"SelfFencingWhenRenewalsFail", testSelfFencingWhenRenewalsFail},
	{"ManyWorkersOneProcess", testManyWorkersOneProcess},
	{"FailureStormUsesFewConnections", testFailureStormUsesFewConnections},
	{"PipelineRunsAheadWithinSlots", testPipelineRunsAheadWithinSlots},
	{"AttemptHistory", testAttemptHistory},
	{"BoundedStats", testBoundedStats},
	{"ThroughputPerMinute", testThroughputPerMinute},
	{"Kill9WorkerProcesses", testKill9WorkerProcesses},
	{"ShortLeaseKeepsItsLease", testShortLeaseKeepsItsLease},
	{"MetadataReachesHandler", testMetadataReachesHandler},
	{"UnreadableMetadataFailsTask", testUnreadableMetadataFailsTask},
	{"PauseSkipsClaims", testPauseSkipsClaims},
	{"PausedTypeWaitsForResume", testPausedTypeWaitsForResume},
	{"WorkerFiresSchedule", testWorkerFiresSchedule},
	{"ScheduleRedefinePauseDelete", testScheduleRedefinePauseDelete},
	{"KeyConcurrencyLimit", testKeyConcurrencyLimit},
	{"KeySequenceFailureRules", testKeySequenceFailureRules},
	{"Kill9KeyedWorkers", testKill9KeyedWorkers},
	{"KeyRateWindows", testKeyRateWindows},
	{"TypeRateWindows", testTypeRateWindows},
	{"FairnessKeys", testFairnessKeys},
	{"FairnessWeights", testFairnessWeights},
	{"WorkflowDiamond", testWorkflowDiamond},
	{"WorkflowParentFailure", testWorkflowParentFailure},
	{"WorkflowParentsEndTogether", testWorkflowParentsEndTogether},
	{"WorkflowStalledAndCancelled", testWorkflowStalledAndCancelled},
	{"WorkflowRetention", testWorkflowRetention},
	{"WorkflowFanOut", testWorkflowFanOut},
	{"WorkflowEndsOnce", testWorkflowEndsOnce},
	{"Kill9Workflows", testKill9Workflows},
}

// engineIndependentCases check what the runtime decides alone (input
// validation, logs, panics, Stop's bound, Wait): they run once, on SQLite,
// from the runtime's own tests (RunEngineIndependent).
var engineIndependentCases = []struct {
	name string
	run  func(*testing.T, *Bundle)
}{
	{"EnqueueRejectsBadInput", testEnqueueRejectsBadInput},
	{"FailuresAreLogged", testFailuresAreLogged},
	{"HandlerReturningAfterStopIsNotAFailure", testHandlerReturningAfterStopIsNotAFailure},
	{"WorkerRecordsPanicWithStack", testWorkerRecordsPanicWithStack},
	{"ClientWait", testClientWait},
	{"StopIsBoundedWhenHandlerIgnoresContext", testStopIsBoundedWhenHandlerIgnoresContext},
	{"WorkOne", testWorkOne},
}

// harnessCases set up their databases themselves.
var harnessCases = []struct {
	name string
	run  func(*testing.T, *drivertest.Harness)
}{
	{"StartRefusesMissingSchema", testStartRefusesMissingSchema},
	{"PeriodicKill9AndRestart", testPeriodicKill9AndRestart},
}

// networkCases cut a worker's or a client's connection through a proxy.
var networkCases = []struct {
	name string
	run  func(*testing.T, *Bundle)
}{
	{"FaultOneWorkerCutOff", testFaultOneWorkerCutOff},
	{"EnqueueOutcomeUnknown", testEnqueueOutcomeUnknown},
	{"LostOutcomeIsRetried", testLostOutcomeIsRetried},
	{"WorkerHostCutOff", func(t *testing.T, b *Bundle) { HostCutOff(t, b, []string{b.DB.DSN}) }},
}

// serverCases kill and freeze a private server.
var serverCases = []struct {
	name string
	run  func(*testing.T, *drivertest.Harness)
}{
	{"OutageLogsOnceAndBacksOff", testOutageLogsOnceAndBacksOff},
	{"FaultDatabaseRestart", testFaultDatabaseRestart},
	{"FaultDatabaseStall", testFaultDatabaseStall},
}
