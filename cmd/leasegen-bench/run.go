package main

import (
	"context"
	"fmt"
	"io"
	"os"
)

// step is one measurement that adds figures to the table, run -runs
// times, each on a fresh database.
type step struct {
	group, name string
	measure     func(ctx context.Context, s *scratch, t *table) error
}

// onceGroups take their figures in the first pass only: runs of minutes.
var onceGroups = map[string]bool{"held": true}

// hostCounts are the numbers of worker hosts the hosts group measures.
var hostCounts = []int{1, 2, 4, 8}

func steps(o options) []step {
	all := []step{
		{"enqueue", "enqueue rates", func(ctx context.Context, s *scratch, t *table) error {
			return enqueueRates(ctx, o, s, t)
		}},
	}
	if o.slots != defaultSlots {
		all = append(all, step{"burn", "burn-down by 1 process, default Config", func(ctx context.Context, s *scratch, t *table) error {
			return burnDown(ctx, o, s, 1, 0, false, defaultBurnName(o), t)
		}})
	}
	all = append(all, step{"burn", "burn-down by 1 process", func(ctx context.Context, s *scratch, t *table) error {
		return burnDown(ctx, o, s, 1, o.slots, false, burnDownName(o, 1), t)
	}})
	if o.procs > 1 {
		all = append(all, step{"burn", fmt.Sprintf("burn-down by %d processes", o.procs), func(ctx context.Context, s *scratch, t *table) error {
			return burnDown(ctx, o, s, o.procs, o.slots, false, burnDownName(o, o.procs), t)
		}})
	}
	for _, r := range keyRules {
		all = append(all, step{"keys", "burn-down of keyed tasks " + r.rule, func(ctx context.Context, s *scratch, t *table) error {
			return burnDownKeyed(ctx, o, s, 1, 0, false, &r, keyedBurnName(o, r), t)
		}})
	}
	for _, weight := range fairWeights {
		all = append(all, step{"fairness", fmt.Sprintf("one key's backlog before 50 keys, fairness weight %d", weight), func(ctx context.Context, s *scratch, t *table) error {
			return fairness(ctx, s, weight, t)
		}})
	}
	all = append(all, step{"workflows", "workflows of 5 steps beside plain tasks", func(ctx context.Context, s *scratch, t *table) error {
		return workflowsBench(ctx, o, s, t)
	}})
	if o.kind() != kindSQLite { // an embedded file has no network to cross
		for _, n := range hostCounts {
			all = append(all, step{"hosts", fmt.Sprintf("burn-down by %d worker hosts", n), func(ctx context.Context, s *scratch, t *table) error {
				return burnDown(ctx, o, s, n, 0, true, hostsBurnName(o, n), t)
			}})
		}
	}
	all = append(all, []step{
		{"ceiling", "row-update ceiling", ceiling},
		{"ceiling", "the protocol's statements alone", func(ctx context.Context, s *scratch, t *table) error {
			return protocol(ctx, o, s, t)
		}},
		{"ceiling", "naive baseline", naive},
		{"latency", "latency in process", func(ctx context.Context, s *scratch, t *table) error {
			return latency(ctx, o, s, true, t)
		}},
		{"latency", "latency across processes", func(ctx context.Context, s *scratch, t *table) error {
			return latency(ctx, o, s, false, t)
		}},
		{"recovery", "recovery after kill -9", recovery},
		{"footprint", "footprint", footprint},
	}...)
	if o.kind() != kindSQLite { // purge and vacuum: the server engines' question
		all = append(all, step{"held", "steady load under a held snapshot", func(ctx context.Context, s *scratch, t *table) error {
			return heldSnapshot(ctx, o, s, t)
		}})
	}
	return all
}

// passSteps are a pass's steps: leasegen's, then River's when -river is
// set, so that both saw the same machine in the same minutes.
func passSteps(o options) []step {
	all := steps(o)
	if o.river != "" {
		all = append(all, riverSteps(o)...)
	}
	return all
}

// run measures the figures of o's groups and prints the table and what it
// says against the targets.
func run(o options, out io.Writer) error {
	ctx := context.Background()
	describeMachine(out)
	s, err := newScratch(ctx, o)
	if err != nil {
		return err
	}
	err = describeServer(ctx, out, s)
	s.close()
	if err != nil {
		return err
	}
	if o.profileDirs != "" {
		if err := os.MkdirAll(o.profileDirs, 0o755); err != nil {
			return err
		}
	}
	t := newTable()
	// Run i of every figure is taken in pass i, so that figures read
	// against each other (a burn-down against the ceiling) saw the same
	// machine: its speed moves by up to 2x within an hour.
	for i := range o.runs {
		for _, st := range passSteps(o) {
			if !o.wants(st.group) || (onceGroups[st.group] && i > 0) {
				continue
			}
			fmt.Fprintf(os.Stderr, "leasegen-bench: %s: %s, run %d of %d\n", o.kind(), st.name, i+1, o.runs)
			s, err := newScratch(ctx, o)
			if err != nil {
				return err
			}
			err = st.measure(ctx, s, t)
			s.close()
			if err != nil {
				return fmt.Errorf("%s: %w", st.name, err)
			}
		}
	}
	fmt.Fprintln(out)
	t.print(out)
	fmt.Fprintln(out)
	printVerdicts(out, o, t)
	printRiverVerdicts(out, o, t)
	return nil
}
