package runtime

import (
	"context"
	"fmt"

	"github.com/leasegen/leasegen/runtime/driver"
	"github.com/leasegen/leasegen/runtime/internal/bookkeeping"
	"github.com/leasegen/leasegen/runtime/leasetype"
)

// ScheduleInfo is a stored schedule of periodic tasks (Client.Schedules).
type ScheduleInfo = leasetype.ScheduleInfo

// Schedules lists every stored schedule by name, each with the live
// workers that register it: a schedule that none registers any more (its
// handler or its WithSchedule was removed) does not fire; DeleteSchedule
// removes it.
func (c *Client) Schedules(ctx context.Context) ([]ScheduleInfo, error) {
	list, now, err := bookkeeping.Schedules(ctx, c.engine.tables)
	if err != nil {
		return nil, c.engine.classify(err)
	}
	workers, err := c.engine.tables.WorkerListLive(ctx)
	if err != nil {
		return nil, c.engine.failed(err, "list live workers")
	}
	for i := range list {
		if !list[i].Paused {
			list[i].Overdue = max(now.Sub(list[i].NextRun), 0)
		}
		for _, w := range workers {
			for _, name := range w.Schedules {
				if name == list[i].Name {
					list[i].Workers = append(list[i].Workers, w.ID)
				}
			}
		}
	}
	return list, nil
}

// PauseSchedule stops schedule name from enqueuing ticks until
// ResumeSchedule, for every worker; the ticks due meanwhile are misfired
// when it resumes (its Misfire policy decides). The state outlives
// restarts. Pausing a paused schedule changes nothing; an unknown name is
// ErrScheduleNotFound.
func (c *Client) PauseSchedule(ctx context.Context, name string) error {
	_, err := bookkeeping.SetSchedulePaused(ctx, c.engine.tables, name, true)
	return c.engine.classify(err)
}

// ResumeSchedule lets schedule name fire again, after PauseSchedule.
func (c *Client) ResumeSchedule(ctx context.Context, name string) error {
	_, err := bookkeeping.SetSchedulePaused(ctx, c.engine.tables, name, false)
	return c.engine.classify(err)
}

// TriggerSchedule enqueues one task of schedule name now, as a tick would
// (its payload, priority and attempts), outside its ticks: the schedule's
// next run does not move. Its metadata names the schedule, without a tick.
func (c *Client) TriggerSchedule(ctx context.Context, name string) (TaskID, error) {
	list, err := c.engine.tables.ScheduleList(ctx)
	if err != nil {
		return 0, c.engine.failed(err, "list schedules")
	}
	for _, s := range list {
		if s.Name != name {
			continue
		}
		ids, err := c.engine.driver.Insert(ctx, c.engine.db, []driver.NewTask{{
			Type: s.TaskType, Payload: s.Payload, Priority: s.Priority, MaxAttempts: s.MaxAttempts,
			Metadata: leasetype.EncodeMetadata(map[string]string{bookkeeping.MetadataSchedule: name}),
		}})
		if err != nil {
			return 0, c.engine.classifyWrite(err)
		}
		c.engine.observer.TasksEnqueued(s.TaskType, 1)
		c.engine.driver.Notify(s.TaskType)
		return ids[0], nil
	}
	return 0, fmt.Errorf("%w: %q", ErrScheduleNotFound, name)
}

// DeleteSchedule deletes schedule name's row: its state (next run,
// counts, paused) is gone; a worker that registers it again stores it
// anew, with its first tick after that. Delete a schedule no worker
// registers any more (Schedules shows no Workers); deleting one that
// live workers register only restarts it when one of them starts again.
func (c *Client) DeleteSchedule(ctx context.Context, name string) error {
	found, err := c.engine.tables.ScheduleDelete(ctx, name)
	if err != nil {
		return c.engine.failed(err, "delete schedule %q", name)
	}
	if !found {
		return fmt.Errorf("%w: %q", ErrScheduleNotFound, name)
	}
	return nil
}
