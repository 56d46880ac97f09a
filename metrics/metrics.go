// Package metrics exports leasegen's runtime events as Prometheus metrics,
// registered on a registry you pass in. It implements runtime.Observer:
//
//	reg := prometheus.NewRegistry()
//	m, err := metrics.New(reg)
//	engine := runtime.NewEngine(leasemysql.New(db), runtime.WithObserver(m))
//	go m.WatchQueue(ctx, client, 15*time.Second) // queue depth, one query per interval
//	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//
// Names follow the lease protocol's design (async_task_*). Alert rules and a
// Grafana dashboard for them are rendered by leasegen -alerts and
// -dashboard.
package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leasegen/leasegen/runtime"
)

// Metrics holds the collectors. It is safe for concurrent use.
type Metrics struct {
	enqueued          *prometheus.CounterVec
	finished          *prometheus.CounterVec
	duration          *prometheus.HistogramVec
	claimLatency      *prometheus.HistogramVec
	running           *prometheus.GaugeVec
	renewals          prometheus.Counter
	renewalSuccesses  prometheus.Counter
	heartbeatFailures prometheus.Counter
	leaseExpired      prometheus.Counter
	recoveries        *prometheus.CounterVec
	recoveryDelay     prometheus.Histogram
	conflictRetries   prometheus.Counter
	keyReleases       prometheus.Counter
	stepsSettled      *prometheus.CounterVec
	workflowsStarted  *prometheus.CounterVec
	workflowsEnded    *prometheus.CounterVec
	workflowDuration  *prometheus.HistogramVec
	queueDepth        *prometheus.GaugeVec
	oldestQueued      *prometheus.GaugeVec
	paused            *prometheus.GaugeVec
	scheduleTicks     *prometheus.CounterVec
	scheduleMissed    *prometheus.CounterVec
	scheduleLag       *prometheus.HistogramVec
	scheduleOverdue   *prometheus.GaugeVec
}

var _ runtime.Observer = (*Metrics)(nil)

// New creates the collectors and registers them on reg.
func New(reg prometheus.Registerer) (*Metrics, error) {
	latency := []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}
	m := &Metrics{
		enqueued: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "async_task_enqueued_total", Help: "Tasks stored by enqueues, by task type.",
		}, []string{"type"}),
		finished: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "async_task_finished_total", Help: "Executions that ended, by task type and outcome (success, retry, failed, released, stale, lost, error).",
		}, []string{"type", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "async_task_duration_seconds", Help: "Handler run time, by task type and outcome.",
			Buckets: prometheus.ExponentialBuckets(.001, 4, 10),
		}, []string{"type", "outcome"}),
		claimLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "async_task_claim_latency_seconds", Help: "Time from a task becoming claimable to its start, by task type.",
			Buckets: latency,
		}, []string{"type"}),
		running: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "async_task_running", Help: "Executions running in this process, by task type.",
		}, []string{"type"}),
		renewals: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "async_task_lease_renewal_total", Help: "Leases the heartbeats tried to renew.",
		}),
		renewalSuccesses: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "async_task_lease_renewal_success_total", Help: "Leases the heartbeats renewed.",
		}),
		heartbeatFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "async_task_heartbeat_failures_total", Help: "Renewal statements that failed.",
		}),
		leaseExpired: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "async_task_lease_expired_total", Help: "Leases that expired and were recovered.",
		}),
		recoveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "async_task_recovery_total", Help: "Expired leases resolved by recovery, by outcome (requeued, failed, cancelled).",
		}, []string{"outcome"}),
		recoveryDelay: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "async_task_recovery_delay_seconds", Help: "Time from a lease's expiry to its recovery.",
			Buckets: latency,
		}),
		keyReleases: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "async_task_key_released_total", Help: "Waiting tasks given a slot of their concurrency key after a task of the key ended.",
		}),
		stepsSettled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "async_task_workflow_steps_settled_total", Help: "Workflow steps decided after their parents ended: queued, or cancelled by a parent that ended without success.",
		}, []string{"decision"}),
		workflowsStarted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "async_task_workflows_started_total", Help: "Workflows stored by this process's enqueues, by workflow name.",
		}, []string{"workflow"}),
		workflowsEnded: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "async_task_workflows_ended_total", Help: "Workflows whose every step ended, by workflow name and status (succeeded, failed: a step failed, cancelled); each end is counted by one process, the one whose recovery pass found it.",
		}, []string{"workflow", "status"}),
		workflowDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "async_task_workflow_duration_seconds", Help: "Time from a workflow's enqueue to its last step's end, on the database's clock, by workflow name and status.",
			Buckets: prometheus.ExponentialBuckets(.01, 4, 12),
		}, []string{"workflow", "status"}),
		conflictRetries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "async_task_conflict_retries_total", Help: "Operations run again after a deadlock, a lock-wait timeout or a busy database.",
		}),
		queueDepth: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "async_task_queue_depth", Help: "Tasks in the database, by task type and status (from WatchQueue).",
		}, []string{"type", "status"}),
		oldestQueued: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "async_task_oldest_queued_seconds", Help: "Age of the oldest due queued task, by task type, 0 while none is due (from WatchQueue).",
		}, []string{"type"}),
		paused: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "async_task_paused_seconds", Help: "How long each paused task type has been paused (Client.Pause, leasectl pause); no series for a type that is not (from WatchQueue).",
		}, []string{"type"}),
		scheduleTicks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "async_task_schedule_ticks_total", Help: "Periodic ticks enqueued by this process's workers, by schedule.",
		}, []string{"schedule"}),
		scheduleMissed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "async_task_schedule_missed_total", Help: "Due periodic ticks not enqueued, by schedule and reason (misfire: found over a minute late and dropped by the misfire policy; overlap: the previous tick's task still ran).",
		}, []string{"schedule", "reason"}),
		scheduleLag: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "async_task_schedule_lag_seconds", Help: "How late each periodic tick was enqueued: the enqueue's instant minus the tick's, on the database's clock, by schedule.",
			Buckets: latency,
		}, []string{"schedule"}),
		scheduleOverdue: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "async_task_schedule_overdue_seconds", Help: "How far past its next run each unpaused schedule is, on the database's clock; grows when no worker fires it (from WatchQueue).",
		}, []string{"schedule"}),
	}
	for _, c := range []prometheus.Collector{
		m.enqueued, m.finished, m.duration, m.claimLatency, m.running, m.renewals, m.renewalSuccesses,
		m.heartbeatFailures, m.leaseExpired, m.recoveries, m.recoveryDelay, m.conflictRetries, m.keyReleases, m.stepsSettled,
		m.workflowsStarted, m.workflowsEnded, m.workflowDuration, m.queueDepth, m.oldestQueued, m.paused,
		m.scheduleTicks, m.scheduleMissed, m.scheduleLag, m.scheduleOverdue,
	} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// TasksEnqueued implements runtime.Observer.
func (m *Metrics) TasksEnqueued(taskType string, n int) {
	m.enqueued.WithLabelValues(taskType).Add(float64(n))
}

// TaskStarted implements runtime.Observer.
func (m *Metrics) TaskStarted(taskType string, waited time.Duration) {
	m.running.WithLabelValues(taskType).Inc()
	m.claimLatency.WithLabelValues(taskType).Observe(max(waited, 0).Seconds())
}

// TaskFinished implements runtime.Observer.
func (m *Metrics) TaskFinished(taskType, outcome string, ran time.Duration) {
	m.running.WithLabelValues(taskType).Dec()
	m.finished.WithLabelValues(taskType, outcome).Inc()
	m.duration.WithLabelValues(taskType, outcome).Observe(ran.Seconds())
}

// LeasesRenewed implements runtime.Observer.
func (m *Metrics) LeasesRenewed(attempted, renewed int) {
	m.renewals.Add(float64(attempted))
	m.renewalSuccesses.Add(float64(renewed))
}

// HeartbeatFailed implements runtime.Observer.
func (m *Metrics) HeartbeatFailed(attempted int) {
	m.heartbeatFailures.Inc()
	m.renewals.Add(float64(attempted))
}

// LeaseRecovered implements runtime.Observer.
func (m *Metrics) LeaseRecovered(outcome string, overdue time.Duration) {
	m.leaseExpired.Inc()
	m.recoveries.WithLabelValues(outcome).Inc()
	m.recoveryDelay.Observe(overdue.Seconds())
}

// ConflictRetried implements runtime.Observer.
func (m *Metrics) ConflictRetried() { m.conflictRetries.Inc() }

// KeysReleased implements runtime.Observer.
func (m *Metrics) KeysReleased(_, released int) { m.keyReleases.Add(float64(released)) }

// StepsSettled implements runtime.Observer.
func (m *Metrics) StepsSettled(queued, cancelled int) {
	m.stepsSettled.WithLabelValues("queued").Add(float64(queued))
	m.stepsSettled.WithLabelValues("cancelled").Add(float64(cancelled))
}

// WorkflowStarted implements runtime.Observer.
func (m *Metrics) WorkflowStarted(name string) { m.workflowsStarted.WithLabelValues(name).Inc() }

// WorkflowEnded implements runtime.Observer.
func (m *Metrics) WorkflowEnded(name string, status runtime.Status, took time.Duration) {
	label := workflowStatusLabels[status]
	m.workflowsEnded.WithLabelValues(name, label).Inc()
	m.workflowDuration.WithLabelValues(name, label).Observe(took.Seconds())
}

// workflowStatusLabels name a workflow's end in the status label.
var workflowStatusLabels = map[runtime.Status]string{
	runtime.StatusSuccess: "succeeded", runtime.StatusFailed: "failed", runtime.StatusCancelled: "cancelled",
}

// ScheduleFired implements runtime.Observer.
func (m *Metrics) ScheduleFired(f runtime.ScheduleFiring) {
	m.scheduleTicks.WithLabelValues(f.Schedule).Add(float64(len(f.Lags)))
	for _, lag := range f.Lags {
		m.scheduleLag.WithLabelValues(f.Schedule).Observe(lag.Seconds())
	}
	if f.Missed > 0 {
		m.scheduleMissed.WithLabelValues(f.Schedule, "misfire").Add(float64(f.Missed))
	}
	if f.Overlapped > 0 {
		m.scheduleMissed.WithLabelValues(f.Schedule, "overlap").Add(float64(f.Overlapped))
	}
}

// WatchQueue sets the queue-depth and schedule gauges from client.Stats
// and client.Schedules once per every, until ctx ends; it blocks, so run it
// with go. A few queries per interval per process, however many workers
// it runs and however often Prometheus scrapes. A failed read keeps the last
// values.
func (m *Metrics) WatchQueue(ctx context.Context, client *runtime.Client, every time.Duration) {
	ticker := time.NewTicker(every)
	defer ticker.Stop()
	for {
		m.RefreshQueue(ctx, client) //nolint:errcheck // kept values until the next tick
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// RefreshQueue reads the queue depth, the paused types and the schedules
// once.
func (m *Metrics) RefreshQueue(ctx context.Context, client *runtime.Client) error {
	st, err := client.Stats(ctx)
	if err != nil {
		return err
	}
	m.queueDepth.Reset()
	for _, c := range st.Counts {
		m.queueDepth.WithLabelValues(c.Type, string(c.Status)).Set(float64(c.Tasks))
	}
	m.oldestQueued.Reset()
	now := time.Now()
	for typ, at := range st.OldestQueued {
		m.oldestQueued.WithLabelValues(typ).Set(max(now.Sub(at), 0).Seconds())
	}
	m.paused.Reset()
	for typ, at := range st.Paused {
		m.paused.WithLabelValues(typ).Set(max(now.Sub(at), 0).Seconds())
	}
	schedules, err := client.Schedules(ctx)
	if err != nil {
		return err
	}
	m.scheduleOverdue.Reset()
	for _, s := range schedules {
		if !s.Paused {
			m.scheduleOverdue.WithLabelValues(s.Name).Set(s.Overdue.Seconds())
		}
	}
	return nil
}
