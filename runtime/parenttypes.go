package runtime

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/leasegen/leasegen/runtime/driver"
)

// parentTypesReadEvery is how often, at most, a worker reads the parent
// types again when a task of a type it does not know as one ended.
const parentTypesReadEvery = time.Second

// parentTypes are the task types whose tasks may have waiting workflow
// children, as an engine knows them: the types its client's workflows and
// spawns recorded, and those it read from the database (another process's
// workflows), at most once a parentTypesReadEvery. A worker settles the
// children of the tasks of these types only; a task of a type recorded
// since the last read has its children settled by recovery's pass.
type parentTypes struct {
	mu     sync.Mutex
	known  map[string]bool
	readAt time.Time
}

// add records types as known.
func (p *parentTypes) add(types ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.known == nil {
		p.known = map[string]bool{}
	}
	for _, t := range types {
		p.known[t] = true
	}
}

// unknown returns the types of types not known, once each.
func (p *parentTypes) unknown(types []string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, t := range types {
		if !p.known[t] && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// worthALook returns the tasks of ended whose types may have waiting
// children: a known type, or any while the list is due a read, which may
// show it is one. It takes the lock once for the batch.
func (p *parentTypes) worthALook(ended []endedTask) []endedTask {
	p.mu.Lock()
	defer p.mu.Unlock()
	if time.Since(p.readAt) >= parentTypesReadEvery {
		return ended
	}
	return slices.DeleteFunc(ended, func(e endedTask) bool { return !p.known[e.typ] })
}

// filter returns the ended tasks whose types may have children, reading
// the list again first when one is unknown and the list is due a read.
func (p *parentTypes) filter(ctx context.Context, tables driver.Tables, ended []endedTask) ([]TaskID, error) {
	p.mu.Lock()
	due := time.Since(p.readAt) >= parentTypesReadEvery && slices.ContainsFunc(ended, func(e endedTask) bool { return !p.known[e.typ] })
	p.mu.Unlock()
	var err error
	if due {
		err = p.read(ctx, tables)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var ids []TaskID
	for _, e := range ended {
		if p.known[e.typ] || err != nil { // a failed read settles them all
			ids = append(ids, e.id)
		}
	}
	return ids, err
}

// read adds the types the database lists.
func (p *parentTypes) read(ctx context.Context, tables driver.Tables) error {
	p.mu.Lock()
	p.readAt = time.Now()
	p.mu.Unlock()
	types, err := tables.ParentTypes(ctx)
	if err != nil {
		return err
	}
	p.add(types...)
	return nil
}

// endedTask is a task that ended, as the settle loop takes it.
type endedTask struct {
	id  TaskID
	typ string
}
