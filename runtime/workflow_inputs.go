package runtime

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// DecodeParents decodes the results of the running step t's parents into
// into, by step name: what a generated workflow step's adapter calls to
// build its typed inputs. A name that ends in "/*" ("fetch/*") takes every
// parent spawned under that name ("fetch/0", "fetch/1", ...) into a
// pointer to a slice, in spawn order. A parent missing from the step's
// workflow fails the step for good, and so does one that did not succeed,
// unless its result goes to a pointer (a *R target, or a []*R element),
// which then stays nil: what a step that runs on its parents' failure
// reads.
func DecodeParents(ctx context.Context, t *Task, into map[string]any) error {
	parents, err := t.Parents(ctx)
	if err != nil {
		return err
	}
	for name, v := range into {
		if base, spawned := strings.CutSuffix(name, "/*"); spawned {
			if err := decodeSpawned(t, parents, base, v); err != nil {
				return err
			}
			continue
		}
		i := slices.IndexFunc(parents, func(p ParentResult) bool { return p.Step == name })
		if i < 0 {
			return Permanent(fmt.Errorf("%w: task %d has no parent step %s", ErrInvalidTask, t.ID, name))
		}
		if err := decodeParent(t, parents[i], reflect.ValueOf(v).Elem()); err != nil {
			return err
		}
	}
	return nil
}

// decodeSpawned sets the slice that v points to to the results of the
// parents named base/0, base/1, ..., in that order.
func decodeSpawned(t *Task, parents []ParentResult, base string, v any) error {
	target := reflect.ValueOf(v)
	if target.Kind() != reflect.Pointer || target.Elem().Kind() != reflect.Slice {
		return Permanent(fmt.Errorf("%w: the results of steps %s/* go into a pointer to a slice, not a %T", ErrInvalidTask, base, v))
	}
	type spawned struct {
		n int
		p ParentResult
	}
	var found []spawned
	for _, p := range parents {
		rest, ok := strings.CutPrefix(p.Step, base+"/")
		if n, err := strconv.Atoi(rest); ok && err == nil {
			found = append(found, spawned{n, p})
		}
	}
	slices.SortFunc(found, func(a, b spawned) int { return cmp.Compare(a.n, b.n) })
	out := reflect.MakeSlice(target.Elem().Type(), len(found), len(found))
	for i, s := range found {
		if err := decodeParent(t, s.p, out.Index(i)); err != nil {
			return err
		}
	}
	target.Elem().Set(out)
	return nil
}

// decodeParent decodes parent p's result into dst, a settable value; a
// pointer dst stays nil when p did not succeed.
func decodeParent(t *Task, p ParentResult, dst reflect.Value) error {
	if p.Status != StatusSuccess {
		if dst.Kind() == reflect.Pointer {
			return nil
		}
		return Permanent(fmt.Errorf("%w: task %d's parent step %s is %s", ErrTaskNotSucceeded, t.ID, p.Step, p.Status))
	}
	if err := json.Unmarshal([]byte(p.Result), dst.Addr().Interface()); err != nil {
		return Permanent(fmt.Errorf("%w: the result of task %d's parent step %s does not decode into %s: %v", ErrInvalidTask, t.ID, p.Step, dst.Type(), err))
	}
	return nil
}
