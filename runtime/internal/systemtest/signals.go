package systemtest

import (
	"maps"
	"sync"
	"time"

	"github.com/leasegen/leasegen/internal/testwait"
	"github.com/leasegen/leasegen/runtime"
)

// Signals is the Observer of every Bundle's engine: the runtime reports
// each execution's end, each recovery and each schedule fire to it, and a
// case waits for those reports instead of sleeping or polling the
// database on a short period. What the reports say is the runtime's own
// account; a case still checks the stored outcome once the report is in.
type Signals struct {
	runtime.BaseObserver

	testwait.Bell
	mu        sync.Mutex
	finished  map[string]int
	succeeded int
	fired     map[string]Firings
	releases  int
	settled   int            // workflow steps queued or cancelled
	ended     map[string]int // workflows ended, by "name STATUS"
}

// Firings sums what the fires of one schedule did.
type Firings struct {
	Ticks, Missed, Overlapped int
}

func newSignals() *Signals {
	return &Signals{
		finished: map[string]int{},
		fired:    map[string]Firings{},
		ended:    map[string]int{},
	}
}

// TaskFinished counts an execution's end by task type, and the
// successes.
func (s *Signals) TaskFinished(taskType, outcome string, _ time.Duration) {
	s.report(func() {
		s.finished[taskType]++
		if outcome == runtime.OutcomeSuccess {
			s.succeeded++
		}
	})
}

// LeaseRecovered wakes the waiters: recovery moved a task.
func (s *Signals) LeaseRecovered(string, time.Duration) { s.report(func() {}) }

// ScheduleFired sums the fires by schedule.
func (s *Signals) ScheduleFired(f runtime.ScheduleFiring) {
	s.report(func() {
		sum := s.fired[f.Schedule]
		sum.Ticks += len(f.Lags)
		sum.Missed += f.Missed
		sum.Overlapped += f.Overlapped
		s.fired[f.Schedule] = sum
	})
}

func (s *Signals) report(update func()) {
	s.mu.Lock()
	update()
	s.mu.Unlock()
	s.Ring()
}

// Finished returns how many executions of taskType have ended.
func (s *Signals) Finished(taskType string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.finished[taskType]
}

// Succeeded returns how many executions have completed their tasks.
func (s *Signals) Succeeded() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.succeeded
}

// Fired returns what the fires of schedule name have done so far.
func (s *Signals) Fired(name string) Firings {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fired[name]
}

// KeysReleased counts the hand-ons of concurrency key slots.
func (s *Signals) KeysReleased(int, int) { s.report(func() { s.releases++ }) }

// Releases returns how many hand-ons of key slots have run.
func (s *Signals) Releases() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.releases
}

// StepsSettled counts the workflow steps settles queued or cancelled.
func (s *Signals) StepsSettled(queued, cancelled int) {
	s.report(func() { s.settled += queued + cancelled })
}

// WorkflowEnded counts the workflows ended by name and status.
func (s *Signals) WorkflowEnded(name string, status runtime.Status, _ time.Duration) {
	s.report(func() { s.ended[name+" "+string(status)]++ })
}

// WorkflowsEnded returns the counts of WorkflowEnded, by "name STATUS".
func (s *Signals) WorkflowsEnded() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.ended)
}

// Settled returns how many workflow steps settles have queued or
// cancelled.
func (s *Signals) Settled() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settled
}
