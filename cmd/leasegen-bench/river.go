package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// River's figures, measured by bench/river's riverbench (-river) on a
// scratch database of the same server, in the same passes as leasegen's.
func riverBurnName(o options, workers int) string {
	return fmt.Sprintf("River burn-down, 1 process x %d workers (%s no-op jobs)", workers, number(float64(o.burn)))
}

const (
	riverInsertName     = "River InsertMany, batches of 1,000 (50,000)"
	riverInsertFastName = "River InsertManyFast (COPY), batches of 1,000 (50,000)"
)

func riverLatencyName(p string) string { return "River latency from another process, " + p }

// riverSteps are the River steps of a pass when -river is set: they need
// no leasegen database.
func riverSteps(o options) []step {
	burn := func(workers int) step {
		return step{"river", fmt.Sprintf("River burn-down, %d workers", workers), func(ctx context.Context, _ *scratch, t *table) error {
			return river(ctx, o, t, map[string]string{"burn": riverBurnName(o, workers)},
				"-mode", "burn", "-jobs", strconv.Itoa(o.burn), "-workers", strconv.Itoa(workers))
		}}
	}
	var all []step
	if o.slots != defaultSlots {
		all = append(all, burn(defaultSlots)) // River's default-like worker count, beside our default Config
	}
	return append(all, []step{
		burn(o.slots),
		{"river", "River inserts", func(ctx context.Context, _ *scratch, t *table) error {
			return river(ctx, o, t, map[string]string{"insert-many": riverInsertName, "insert-many-fast": riverInsertFastName},
				"-mode", "insert", "-jobs", "50000")
		}},
		{"river", "River latency", func(ctx context.Context, _ *scratch, t *table) error {
			return river(ctx, o, t, map[string]string{
				"latency-p50": riverLatencyName("p50"), "latency-p90": riverLatencyName("p90"), "latency-p99": riverLatencyName("p99"),
			}, "-mode", "latency", "-rate", strconv.Itoa(o.rate), "-for", o.latencyFor.String(), "-warmup", o.warmup.String(),
				"-workers", strconv.Itoa(o.slots))
		}},
	}...)
}

// river runs riverbench with args and adds the figures it prints, named
// by names.
func river(ctx context.Context, o options, t *table, names map[string]string, args ...string) error {
	args = append([]string{"-postgres", o.postgres, "-fetch-cooldown", o.riverCooldown.String(), "-fetch-poll", o.riverPoll.String()}, args...)
	cmd := exec.CommandContext(ctx, o.river, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("riverbench %s: %w", strings.Join(args[6:], " "), err)
	}
	return addRiverFigures(&out, t, names)
}

func addRiverFigures(out io.Reader, t *table, names map[string]string) error {
	sc := bufio.NewScanner(out)
	found := 0
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), "\t")
		name, known := names[key]
		if !ok || !known {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return fmt.Errorf("riverbench: %q: %w", sc.Text(), err)
		}
		unit := "tasks/s"
		if strings.HasPrefix(key, "latency") {
			unit = "ms"
		}
		t.add(name, unit, v)
		found++
	}
	if found != len(names) {
		return fmt.Errorf("riverbench printed %d of its %d figures", found, len(names))
	}
	return nil
}

// riverDefaultRescue is River's RescueStuckJobsAfter default: how long a
// job whose worker died waits before River runs it again.
const riverDefaultRescue = time.Hour

// printRiverVerdicts compares leasegen's figures with River's of the same
// passes, run by run, against the PostgreSQL issue's targets.
func printRiverVerdicts(w io.Writer, o options, t *table) {
	if _, ok := t.median(riverBurnName(o, o.slots)); !ok {
		return
	}
	fmt.Fprintln(w, "against River on the same server, run by run:")
	compare := func(what, ours, theirs string, target float64, higherIsBetter bool) {
		r, ok := pairedRatios(t, ours, theirs)
		if !ok {
			return
		}
		verdict := "met"
		if (higherIsBetter && r.median < target) || (!higherIsBetter && r.median > target) {
			verdict = "MISSED"
		}
		fmt.Fprintf(w, "  %-72s %-7s %.2fx (runs %s)\n", what, verdict, r.median, r.runs)
	}
	if o.slots != defaultSlots {
		compare(fmt.Sprintf("burn-down, default Config: >= 2x River's with %d workers", defaultSlots), defaultBurnName(o), riverBurnName(o, defaultSlots), 2, true)
	}
	compare(fmt.Sprintf("burn-down, %d slots: >= 2x River's with %d workers", o.slots, o.slots), burnDownName(o, 1), riverBurnName(o, o.slots), 2, true)
	compare("batch enqueue (1,000 rows): >= River's InsertMany", "enqueue, batches of 1,000 (50,000)", riverInsertName, 1, true)
	compare("batch enqueue (1,000 rows): vs River's InsertManyFast (COPY)", "enqueue, batches of 1,000 (50,000)", riverInsertFastName, 1, true)
	compare("latency p50 from another process: ours / River's", latencyName(false, "p50"), riverLatencyName("p50"), 1, false)
	compare("latency p99 from another process: ours / River's", latencyName(false, "p99"), riverLatencyName("p99"), 1, false)
	if v, ok := t.median(latencyName(false, "p50")); ok {
		check := "met"
		if v > 3 {
			check = "MISSED"
		}
		fmt.Fprintf(w, "  %-72s %-7s %.1f ms\n", "latency p50 from another process <= 3 ms", check, v)
	}
	if v, ok := t.median(latencyName(false, "p99")); ok {
		check := "met"
		if v > 15 {
			check = "MISSED"
		}
		fmt.Fprintf(w, "  %-72s %-7s %.1f ms\n", "latency p99 from another process <= 15 ms", check, v)
	}
	if bound, ok := t.median(recoveryBoundName); ok {
		fmt.Fprintf(w, "  recovery after kill -9: within %.1f s here; River rescues a dead worker's jobs after RescueStuckJobsAfter, %s by default\n",
			bound, riverDefaultRescue)
	}
}

// pairedRatios is ours/theirs of each pass, and their median.
func pairedRatios(t *table, ours, theirs string) (share, bool) {
	a, b := t.byName[ours], t.byName[theirs]
	if a == nil || b == nil || len(a.values) == 0 || len(a.values) != len(b.values) {
		return share{}, false
	}
	ratios := &row{}
	parts := make([]string, len(a.values))
	for i, v := range a.values {
		ratios.values = append(ratios.values, v/b.values[i])
		parts[i] = fmt.Sprintf("%.2fx", v/b.values[i])
	}
	return share{median: ratios.median(), runs: strings.Join(parts, ", ")}, true
}
