package leasectl

import (
	"encoding/json"
	"time"

	"github.com/leasegen/leasegen/runtime"
)

// taskJSON is a task as -json prints it: snake_case keys, times in UTC
// (omitted when unset), and the payload as JSON when it is JSON, else in
// base64 under payload_base64.
type taskJSON struct {
	ID             runtime.TaskID    `json:"id"`
	Type           string            `json:"type"`
	Status         runtime.Status    `json:"status"`
	Payload        json.RawMessage   `json:"payload,omitempty"`
	PayloadBase64  []byte            `json:"payload_base64,omitempty"`
	Priority       int               `json:"priority"`
	AttemptsUsed   int               `json:"attempts_used"`
	MaxAttempts    int               `json:"max_attempts"`
	Attempt        int               `json:"attempt"`
	OwnerID        string            `json:"owner_id,omitempty"`
	IdempotencyKey string            `json:"idempotency_key,omitempty"`
	WorkKey        string            `json:"work_key,omitempty"`
	Metadata       map[string]string `json:"metadata,omitempty"`
	LeaseOwner     string            `json:"lease_owner,omitempty"`
	LeaseUntil     *time.Time        `json:"lease_until,omitempty"`
	AvailableAt    *time.Time        `json:"available_at,omitempty"`
	CreatedAt      *time.Time        `json:"created_at,omitempty"`
	UpdatedAt      *time.Time        `json:"updated_at,omitempty"`
	StartedAt      *time.Time        `json:"started_at,omitempty"`
	FinishedAt     *time.Time        `json:"finished_at,omitempty"`
	Result         string            `json:"result,omitempty"`
	LastError      string            `json:"last_error,omitempty"`
	Attempts       []attemptJSON     `json:"attempts,omitempty"`
}

// attemptJSON is one attempt of show -json's history.
type attemptJSON struct {
	Attempt    int        `json:"attempt"`
	Outcome    string     `json:"outcome"`
	Worker     string     `json:"worker,omitempty"`
	StartedAt  *time.Time `json:"started_at,omitempty"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	DurationMS float64    `json:"duration_ms"`
	Error      string     `json:"error,omitempty"`
}

func newTaskJSON(t runtime.TaskInfo) taskJSON {
	out := taskJSON{
		ID: t.ID, Type: t.Type, Status: t.Status, Priority: t.Priority,
		AttemptsUsed: t.AttemptsUsed, MaxAttempts: t.MaxAttempts, Attempt: t.Attempt,
		OwnerID: t.OwnerID, IdempotencyKey: t.IdempotencyKey, WorkKey: t.WorkKey, Metadata: t.Metadata, LeaseOwner: t.LeaseOwner,
		LeaseUntil: optionalTime(t.LeaseUntil), AvailableAt: optionalTime(t.AvailableAt),
		CreatedAt: optionalTime(t.CreatedAt), UpdatedAt: optionalTime(t.UpdatedAt),
		StartedAt: optionalTime(t.StartedAt), FinishedAt: optionalTime(t.FinishedAt),
		Result: t.Result, LastError: t.LastError,
	}
	for _, a := range t.Attempts {
		out.Attempts = append(out.Attempts, attemptJSON{Attempt: a.Attempt, Outcome: a.Outcome, Worker: a.Worker,
			StartedAt: optionalTime(a.StartedAt), FinishedAt: optionalTime(a.FinishedAt),
			DurationMS: float64(a.Duration.Microseconds()) / 1000, Error: a.Error})
	}
	if json.Valid(t.Payload) {
		out.Payload = t.Payload
	} else {
		out.PayloadBase64 = t.Payload
	}
	return out
}

func optionalTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// statsJSON is stats -json's shape.
type statsJSON struct {
	Counts          []countJSON          `json:"counts"`
	OldestQueued    map[string]time.Time `json:"oldest_queued"`
	RunningByWorker map[string]int       `json:"running_by_worker"`
	Paused          map[string]time.Time `json:"paused"`
}

// countJSON is the number of tasks of one type in one status.
type countJSON struct {
	Type   string         `json:"type"`
	Status runtime.Status `json:"status"`
	Tasks  int            `json:"tasks"`
}

func newStatsJSON(st runtime.QueueStats) statsJSON {
	out := statsJSON{Counts: []countJSON{}, OldestQueued: st.OldestQueued, RunningByWorker: st.RunningByWorker, Paused: st.Paused}
	for _, c := range st.Counts {
		out.Counts = append(out.Counts, countJSON{c.Type, c.Status, c.Tasks})
	}
	return out
}

// workerJSON is workers -json's shape: runtime.WorkerInfo with snake_case
// keys.
type workerJSON struct {
	ID             string         `json:"id"`
	Host           string         `json:"host"`
	PID            int            `json:"pid"`
	StartedAt      time.Time      `json:"started_at"`
	AliveUntil     time.Time      `json:"alive_until"`
	MaxConcurrency int            `json:"max_concurrency"`
	GlobalLimit    int            `json:"global_limit"`
	TaskLimits     map[string]int `json:"task_limits"`
	Schedules      []string       `json:"schedules,omitempty"`
}

// keyJSON is keys -json's shape: runtime.KeyInfo with snake_case keys.
type keyJSON struct {
	Type           string `json:"type"`
	Key            string `json:"key"`
	Limit          int    `json:"limit"`
	BlockOnFailure bool   `json:"block_on_failure"`
	Running        int    `json:"running"`
	Holding        int    `json:"holding"`
	Waiting        int    `json:"waiting"`
	AtLimit        bool   `json:"at_limit"`
	// The key's rate, when it has one: at most Rate starts in any
	// RateWindow, of which StartsInWindow are used.
	Rate           int    `json:"rate,omitempty"`
	RateWindow     string `json:"rate_window,omitempty"`
	StartsInWindow int    `json:"starts_in_window,omitempty"`
	AtRate         bool   `json:"at_rate"`
	// Share is a fairness key's most tasks queued at once (0: not fair).
	Share int `json:"share,omitempty"`
}
