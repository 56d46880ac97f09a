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

func steps(o options) []step {
	return []step{
		{"enqueue", "enqueue rates", func(ctx context.Context, s *scratch, t *table) error {
			return enqueueRates(ctx, o, s, t)
		}},
		{"burn", "burn-down by 1 process", func(ctx context.Context, s *scratch, t *table) error {
			return burnDown(ctx, o, s, 1, t)
		}},
		{"burn", fmt.Sprintf("burn-down by %d processes", o.procs), func(ctx context.Context, s *scratch, t *table) error {
			return burnDown(ctx, o, s, o.procs, t)
		}},
		{"ceiling", "row-update ceiling", ceiling},
		{"ceiling", "naive baseline", naive},
		{"latency", "latency in process", func(ctx context.Context, s *scratch, t *table) error {
			return latency(ctx, o, s, true, t)
		}},
		{"latency", "latency across processes", func(ctx context.Context, s *scratch, t *table) error {
			return latency(ctx, o, s, false, t)
		}},
		{"recovery", "recovery after kill -9", recovery},
		{"footprint", "footprint", footprint},
	}
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
	for _, st := range steps(o) {
		if !o.wants(st.group) {
			continue
		}
		for i := range o.runs {
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
	return nil
}
