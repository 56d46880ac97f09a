package drivertest

import (
	"fmt"
	"strings"
	"testing"
)

// Exercise runs the driver's conformance suite on the engine of h: every
// query and step of the contract that the database decides (claims,
// renewals, fences, limits, recovery, schedules' locks, the bookkeeping
// queries and InTx's promise, migrations), each in a parallel subtest on a
// database of its own. A driver's package runs it from one test, and the
// runtime's system suite (runtime/internal/systemtest) from another:
//
//	func TestConformance(t *testing.T) { drivertest.Exercise(t, &harness) }
func Exercise(t *testing.T, h *Harness) {
	if err := h.Validate(); err != nil {
		t.Fatal(err)
	}
	t.Parallel()
	for _, c := range bundleCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, Setup(t, h))
		})
	}
	for _, c := range harnessCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, h)
		})
	}
}

// Validate reports a harness that lacks what every case needs.
func (h *Harness) Validate() error {
	var missing []string
	for name, ok := range map[string]bool{
		"Name": h.Name != "", "NewDatabase": h.NewDatabase != nil, "Open": h.Open != nil, "New": h.New != nil,
		"ExpireSQL": h.ExpireSQL != "", "MillisUntilSQL": h.MillisUntilSQL != "",
		"Stallable (or ServerAddr and WithServerAddr)": h.Stallable != nil || h.Networked(),
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

// bundleCases run on a migrated fresh database.
var bundleCases = []struct {
	name string
	run  func(*testing.T, *Bundle)
}{
	{"ClaimOrderAndAvailability", testClaimOrderAndAvailability},
	{"ConcurrentClaimsAreDisjoint", testConcurrentClaimsAreDisjoint},
	{"FenceRejectsStaleExecution", testFenceRejectsStaleExecution},
	{"RenewReportsEachLease", testRenewReportsEachLease},
	{"RecoveryOutcomes", testRecoveryOutcomes},
	{"ReleaseDoesNotUseAnAttempt", testReleaseDoesNotUseAnAttempt},
	{"ClaimHonoursLimits", testClaimHonoursLimits},
	{"CompleteManyFencesEachRow", testCompleteManyFencesEachRow},
	{"TablesPurgeableCount", testTablesPurgeableCount},
	{"TablesWorkKeys", testTablesWorkKeys},
	{"TablesCounts", testTablesCounts},
	{"SchedulesRegisterAndFire", testSchedulesRegisterAndFire},
	{"ScheduleFiresOnceUnderRace", testScheduleFiresOnceUnderRace},
	{"ScheduleSeesLastTaskActive", testScheduleSeesLastTaskActive},
	{"TablesInTxSerializesRegistry", testTablesInTxSerializesRegistry},
	{"TablesRegistryPausedAttempts", testTablesRegistryPausedAttempts},
	{"TablesInSeesTheTransaction", testTablesInSeesTheTransaction},
	{"KeyReleaseInOlderSnapshot", testKeyReleaseInOlderSnapshot},
	{"KeyHoldersWhileTaskMoves", testKeyHoldersWhileTaskMoves},
	{"FairKeysShareByWeight", testFairKeysShareByWeight},
	{"DeadlockIsAConflict", testDeadlockIsAConflict},
}

// harnessCases set up their databases themselves.
var harnessCases = []struct {
	name string
	run  func(*testing.T, *Harness)
}{
	{"MigrateConcurrentAndIdempotent", testMigrateConcurrentAndIdempotent},
}
