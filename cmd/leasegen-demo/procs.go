package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/leasegen/leasegen/runtime"
)

// workerProcs are the demo's worker processes.
type workerProcs struct {
	c     config
	exe   string
	procs []*exec.Cmd
	ids   []string
	kills int
}

func startWorkers(c config) (*workerProcs, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	p := &workerProcs{c: c, exe: exe, procs: make([]*exec.Cmd, c.workers), ids: make([]string, c.workers)}
	for slot := range c.workers {
		if err := p.start(slot); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// start runs the worker process of slot with a fresh worker id.
func (p *workerProcs) start(slot int) error {
	id := fmt.Sprintf("worker-%d", slot+1)
	if p.kills > 0 {
		id = fmt.Sprintf("worker-%d-restart-%d", slot+1, p.kills)
	}
	args := []string{"-worker", id, "-work", p.c.work.String()}
	if p.c.dsn != "" {
		args = append(args, "-dsn", p.c.dsn)
	} else {
		args = append(args, "-sqlite", p.c.sqlite)
	}
	cmd := exec.Command(p.exe, args...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start worker process: %w", err)
	}
	p.procs[slot], p.ids[slot] = cmd, id
	return nil
}

// crashReport is what the crash left behind.
type crashReport struct {
	victim, replacement string
	at                  time.Time
	held                map[runtime.TaskID]int // running task -> attempt at the kill
}

// crashOne kill -9s the middle worker, noting the tasks it was running, and
// starts a replacement.
func (p *workerProcs) crashOne(ctx context.Context, client *runtime.Client) (*crashReport, error) {
	slot := len(p.procs) / 2
	victim := p.ids[slot]
	held := map[runtime.TaskID]int{}
	for before := runtime.TaskID(0); ; {
		page, err := client.List(ctx, runtime.Filter{Status: runtime.StatusRunning, BeforeID: before, Limit: 1000})
		if err != nil {
			return nil, err
		}
		for _, t := range page {
			if t.LeaseOwner == victim {
				held[t.ID] = t.Attempt
			}
		}
		if len(page) < 1000 {
			break
		}
		before = page[len(page)-1].ID
	}
	if err := p.procs[slot].Process.Signal(syscall.SIGKILL); err != nil {
		return nil, err
	}
	at := time.Now()
	_ = p.procs[slot].Wait()
	p.kills++
	if err := p.start(slot); err != nil {
		return nil, err
	}
	return &crashReport{victim: victim, replacement: p.ids[slot], at: at, held: held}, nil
}

// stopAll asks every worker to stop gracefully and waits for them.
func (p *workerProcs) stopAll() {
	for i, cmd := range p.procs {
		if cmd == nil {
			continue
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		p.procs[i] = nil
	}
}
