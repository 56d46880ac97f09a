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
	ceil, haveCeil := t.median(ceilingName)
	naiveRate, haveNaive := t.median(naiveName)
	if haveBurn && haveCeil {
		fmt.Fprintf(w, "burn-down by 1 process: %.0f%% of the ceiling of a task's 2 row updates (claim, completion); %.0f%% counting tasks as rows\n",
			100*2*burn/ceil, 100*burn/ceil)
		if flips, ok := t.median(flipsCeilingName); ok {
			fmt.Fprintf(w, "burn-down by 1 process: %.0f%% of the status-flip ceiling (2 flips a task)\n", 100*2*burn/flips)
		}
	}
	if haveBurn && haveNaive {
		fmt.Fprintf(w, "burn-down by 1 process: %.1fx the naive baseline\n", burn/naiveRate)
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
	if haveBurn && haveCeil {
		check("burn-down >= 60% of the ceiling (2 row updates a task)", 2*burn >= 0.6*ceil, fmt.Sprintf("%.0f%%", 100*2*burn/ceil))
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
		// One probe per poll and one per recovery pass, and one more for a
		// window that catches a poll at each end.
		allowed := (o.idle.Seconds()/defaultPollInterval.Seconds() + o.idle.Seconds()/defaultRecoveryInterval.Seconds() + 1) / o.idle.Seconds()
		check("idle worker: 1 cheap statement per PollInterval (+1 per RecoveryInterval)", v <= allowed, fmt.Sprintf("%.2f/s (allowed %.2f/s)", v, allowed))
	}
	if v, ok := t.median(statementsName); ok {
		check("<= 0.2 statements per task at saturation", v <= 0.2, fmt.Sprintf("%.3f", v))
	}
	if v, ok := t.median(heartbeatName); ok {
		check("1 or 2 heartbeat statements per interval, 1,000 running", v <= 2.05, fmt.Sprintf("%.2f", v))
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
