package runtime

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/leasegen/leasegen/runtime/driver"
)

// listedTypes is a driver.Tables whose ParentTypes lists types, or fails
// with err, and counts its reads; its other methods are not called.
type listedTypes struct {
	driver.Tables
	types []string
	err   error
	reads int
}

func (l *listedTypes) ParentTypes(context.Context) ([]string, error) {
	l.reads++
	return l.types, l.err
}

// A worker settles the children of tasks of the parent types only: a type
// it knows, or one the database lists, read at most once a second when a
// task of a type it does not know ended; a failed read settles them all.
func TestParentTypesFilter(t *testing.T) {
	var p parentTypes
	p.add("known")
	db := &listedTypes{types: []string{"listed"}}
	ended := []endedTask{{1, "known"}, {2, "listed"}, {3, "plain"}}
	ids, err := p.filter(bg, db, ended)
	if err != nil || db.reads != 1 {
		t.Fatalf("first filter: %v, %d reads; want one read", err, db.reads)
	}
	if diff := cmp.Diff([]TaskID{1, 2}, ids); diff != "" {
		t.Errorf("settled (-want +got):\n%s", diff)
	}
	if got := p.worthALook([]endedTask{{4, "plain"}, {5, "listed"}}); len(got) != 1 || got[0].id != 5 {
		t.Errorf("just after a read, worth a look: %v; want listed's task alone", got)
	}
	db.types = append(db.types, "plain")
	if ids, _ := p.filter(bg, db, ended); db.reads != 1 || len(ids) != 2 {
		t.Errorf("within a second: %d reads, settled %v; want no read, 1 and 2", db.reads, ids)
	}
	p.readAt = time.Now().Add(-parentTypesReadEvery)
	if got := p.worthALook([]endedTask{{4, "plain"}}); len(got) != 1 {
		t.Error("a second after the read, an unknown type is not worth a look")
	}
	if ids, _ := p.filter(bg, db, ended); db.reads != 2 || len(ids) != 3 {
		t.Errorf("a second later: %d reads, settled %v; want a second read and all three", db.reads, ids)
	}
	p = parentTypes{}
	failing := &listedTypes{err: errors.New("down")}
	if ids, err := p.filter(bg, failing, ended); err == nil || len(ids) != 3 {
		t.Errorf("a failed read: %v, settled %v; want the error and all three", err, ids)
	}
}
