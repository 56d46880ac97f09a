package main

import (
	"fmt"
	"io"
	"strings"
)

// printVerdicts relates the figures to the yardsticks measured in the same
// run and to the targets of the benchmark issue (set for this 2-core
// machine kind, MariaDB with durable defaults; SQLite has its own
// burn-down target).
func printVerdicts(w io.Writer, o options, t *table) {
	burn, haveBurn := t.median(burnDownName(o, 1))
	share, haveShare := ceilingShare(t, burnDownName(o, 1), ceilingName)
	naiveRate, haveNaive := t.median(naiveName)
	if haveShare {
		fmt.Fprintf(w, "burn-down by 1 process: %.0f%% of the ceiling of a task's 2 row updates (claim, completion), run by run %s; %.0f%% counting tasks as rows\n",
			100*share.median, share.runs, 50*share.median)
		if flips, ok := ceilingShare(t, burnDownName(o, 1), flipsCeilingName); ok {
			fmt.Fprintf(w, "burn-down by 1 process: %.0f%% of the status-flip ceiling (2 flips a task)\n", 100*flips.median)
		}
	}
	if haveBurn && haveNaive {
		fmt.Fprintf(w, "burn-down by 1 process: %.1fx the naive baseline\n", burn/naiveRate)
	}
	defaultShare, haveDefault := ceilingShare(t, defaultBurnName(o), ceilingName)
	if haveDefault {
		fmt.Fprintf(w, "burn-down with the default Config: %.0f%% of the ceiling, run by run %s\n", 100*defaultShare.median, defaultShare.runs)
	}
	if bare, ok := ceilingShare(t, protocolName, ceilingName); ok {
		fmt.Fprintf(w, "the protocol's statements alone, no worker: %.0f%% of the ceiling, run by run %s\n", 100*bare.median, bare.runs)
	}
	burnTarget := 20000.0
	if o.sqlite {
		burnTarget = 25000
	}
	check := func(target string, ok bool, have string) {
		verdict := "met"
		if !ok {
			verdict = "MISSED"
		}
		fmt.Fprintf(w, "  %-72s %-7s %s\n", target, verdict, have)
	}
	fmt.Fprintln(w, "targets:")
	if haveBurn {
		check(fmt.Sprintf("burn-down by 1 process >= %s tasks/s", number(burnTarget)), burn >= burnTarget, number(burn))
	}
	if haveShare {
		check("burn-down >= 60% of the ceiling (2 row updates a task)", share.median >= 0.6, fmt.Sprintf("%.0f%%", 100*share.median))
	}
	if haveBurn && haveNaive {
		check("burn-down >= 10x the naive baseline", burn >= 10*naiveRate, fmt.Sprintf("%.1fx", burn/naiveRate))
	}
	if v, ok := t.median(latencyName(true, "p50")); ok {
		check("latency p50 in the worker's process <= 5 ms", v <= 5, fmt.Sprintf("%.1f ms", v))
	}
	if v, ok := t.median(latencyName(false, "p99")); ok {
		check("latency p99 from another process <= 50 ms", v <= 50, fmt.Sprintf("%.1f ms", v))
	}
	if v, ok := t.median(idleStatementsName); ok {
		// One probe per poll, and per recovery pass a look for expired
		// leases and the renewal of the worker's row, and one more for a
		// window that catches a poll at each end.
		allowed := (o.idle.Seconds()/defaultPollInterval.Seconds() + 2*o.idle.Seconds()/defaultRecoveryInterval.Seconds() + 1) / o.idle.Seconds()
		check("idle worker: 1 cheap statement per PollInterval (+2 per RecoveryInterval)", v <= allowed, fmt.Sprintf("%.2f/s (allowed %.2f/s)", v, allowed))
	}
	if v, ok := t.median(statementsName); ok {
		check("<= 0.2 statements per task at saturation", v <= 0.2, fmt.Sprintf("%.3f", v))
	}
	if v, ok := t.median(heartbeatName); ok {
		check("1 or 2 heartbeat statements per interval, 1,000 running", v <= 2.05, fmt.Sprintf("%.2f", v))
	}
	if ceil, ok := t.median(ceilingCPUName); ok && ceil > 0 {
		for _, burn := range []string{defaultBurnName(o), burnDownName(o, 1)} {
			if v, ok := t.median(serverCPUName(burn)); ok {
				check(fmt.Sprintf("server CPU per task <= 1.5x the ceiling's, %s", strings.TrimPrefix(burn, "burn-down, ")),
					v <= 1.5*ceil, fmt.Sprintf("%.1f us = %.2fx %.1f us", v, v/ceil, ceil))
			}
		}
	}
	checkMoreHosts(t, o, check)
	if first, ok := t.median(heldName(o, "pickup p99, first window")); ok {
		last, _ := t.median(heldName(o, "pickup p99, last window"))
		check("held snapshot: pickup p99 in the last window <= 2x the first", last <= 2*first, fmt.Sprintf("%.1f -> %.1f ms", first, last))
		started, _ := t.median(heldName(o, "tasks started a second, last window"))
		check("held snapshot: the last window starts >= 95% of the offered rate", started >= 0.95*float64(o.heldRate),
			fmt.Sprintf("%.0f of %d tasks/s", started, o.heldRate))
	}
	if bound, ok := t.median(recoveryBoundName); ok {
		last := 0.0
		for _, r := range t.rows {
			if strings.HasSuffix(r.figure, " last") {
				for _, v := range r.values {
					last = max(last, v)
				}
			}
		}
		check("recovery always within lease + recovery interval + poll", last <= bound, fmt.Sprintf("slowest %.2f s of %.1f s", last, bound))
	}
}

// share is a burn-down's share of a ceiling: the median of its runs and
// how the runs read.
type share struct {
	median float64
	runs   string
}

// ceilingShare relates the burn-down to a ceiling of row updates at two
// updates a task, run by run: run i of both was taken in the same pass,
// on the same machine. When the runs do not pair up, it is the ratio of
// the medians.
func ceilingShare(t *table, burnFigure, ceilingFigure string) (share, bool) {
	burn, ceil := t.byName[burnFigure], t.byName[ceilingFigure]
	if burn == nil || ceil == nil || len(burn.values) == 0 || len(ceil.values) == 0 {
		return share{}, false
	}
	if len(burn.values) != len(ceil.values) {
		r := 2 * burn.median() / ceil.median()
		return share{median: r, runs: "(runs not paired)"}, true
	}
	ratios := &row{}
	for i, b := range burn.values {
		ratios.values = append(ratios.values, 2*b/ceil.values[i])
	}
	parts := make([]string, len(ratios.values))
	for i, r := range ratios.values {
		parts[i] = fmt.Sprintf("%.0f%%", 100*r)
	}
	return share{median: ratios.median(), runs: strings.Join(parts, ", ")}, true
}

// checkMoreHosts checks issue 39's scaling targets against the hosts
// group: more worker hosts burn down at least as fast as one, and the
// server's CPU per task grows by at most 10%.
func checkMoreHosts(t *table, o options, check func(target string, ok bool, have string)) {
	one, ok := t.median(hostsBurnName(o, 1))
	oneCPU, okCPU := t.median(serverCPUName(hostsBurnName(o, 1)))
	if !ok {
		return
	}
	for _, n := range hostCounts[1:] {
		if rate, ok := t.median(hostsBurnName(o, n)); ok {
			check(fmt.Sprintf("%d worker hosts burn down at least as fast as 1", n), rate >= one,
				fmt.Sprintf("%s against %s tasks/s (%.2fx)", number(rate), number(one), rate/one))
		}
		if cpu, ok := t.median(serverCPUName(hostsBurnName(o, n))); ok && okCPU && oneCPU > 0 {
			check(fmt.Sprintf("%d worker hosts: server CPU per task <= 1.1x 1 host's", n), cpu <= 1.1*oneCPU,
				fmt.Sprintf("%.1f against %.1f us (%.2fx)", cpu, oneCPU, cpu/oneCPU))
		}
	}
}
