package leasectl

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/leasegen/leasegen/runtime"
)

// commands maps a command name to its implementation.
var commands = map[string]func(ctx context.Context, e *env, args []string) error{
	"migrate":   migrate,
	"list":      list,
	"show":      show,
	"cancel":    cancel,
	"retry":     retry,
	"discard":   discard,
	"purge":     purge,
	"stats":     stats,
	"workers":   workers,
	"keys":      keys,
	"pause":     pause,
	"resume":    resume,
	"schedules": schedules,
	"workflows": workflows,
	"ui":        serveUI,
}

func migrate(ctx context.Context, e *env, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("%w: migrate up|status|sql", errUsage)
	}
	switch args[0] {
	case "up":
		if err := e.engine.Migrate(ctx); err != nil {
			return err
		}
		states, err := e.engine.MigrationStatus(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "schema at version %d\n", states[len(states)-1].Version)
		return nil
	case "status":
		states, err := e.engine.MigrationStatus(ctx)
		if err != nil {
			return err
		}
		w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "VERSION\tNAME\tAPPLIED")
		for _, s := range states {
			applied := "pending"
			if !s.AppliedAt.IsZero() {
				applied = s.AppliedAt.Format(time.RFC3339)
			}
			fmt.Fprintf(w, "%d\t%s\t%s\n", s.Version, s.Name, applied)
		}
		return w.Flush()
	case "sql":
		script, err := e.engine.MigrationSQL()
		if err != nil {
			return err
		}
		_, err = io.WriteString(e.stdout, script)
		return err
	}
	return fmt.Errorf("%w: migrate up|status|sql, not %q", errUsage, args[0])
}

func list(ctx context.Context, e *env, args []string) error {
	fs := newFlags("list")
	filter := filterFlags(fs)
	before := fs.Int64("before", 0, "")
	beforeFinished := fs.String("before-finished", "", "")
	limit := fs.Int("limit", 50, "")
	asJSON := fs.Bool("json", false, "")
	if _, err := parse(fs, args, 0); err != nil {
		return err
	}
	f, err := filter()
	if err != nil {
		return err
	}
	if *before < 0 {
		return fmt.Errorf("%w: -before must be a task id, got %d", errUsage, *before)
	}
	f.BeforeID, f.Limit = runtime.TaskID(*before), *limit
	if f.Limit <= 0 {
		return fmt.Errorf("%w: -limit must be above 0, got %d", errUsage, f.Limit)
	}
	// One final status alone is listed the latest finished first, through
	// the index of finished tasks: newest first by id, failures older than
	// most tasks would be found only after reading all the newer ones.
	ff, finished := f.Finished()
	var tasks []runtime.TaskInfo
	if finished {
		if *beforeFinished != "" {
			if ff.BeforeFinishedAt, err = time.Parse(time.RFC3339Nano, *beforeFinished); err != nil {
				return fmt.Errorf("%w: -before-finished %q: want a time such as 2026-12-07T00:14:28.036Z", errUsage, *beforeFinished)
			}
		}
		tasks, err = e.client.ListFinished(ctx, ff)
	} else {
		if *beforeFinished != "" {
			return fmt.Errorf("%w: -before-finished pages a list of one final status (-status SUCCESS, FAILED or CANCELLED, and -type) alone", errUsage)
		}
		tasks, err = e.client.List(ctx, f)
	}
	if err != nil {
		return err
	}
	if *asJSON {
		out := make([]taskJSON, len(tasks))
		for i, t := range tasks {
			out[i] = newTaskJSON(t)
		}
		return writeJSON(e.stdout, out)
	}
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	when, at := "CREATED", func(t runtime.TaskInfo) string { return t.CreatedAt.Format(time.RFC3339) }
	if finished {
		when, at = "FINISHED", func(t runtime.TaskInfo) string { return t.FinishedAt.UTC().Format(time.RFC3339Nano) }
	}
	fmt.Fprintf(w, "ID\tTYPE\tSTATUS\tATTEMPTS\tPRIORITY\tOWNER\t%s\tLAST ERROR\n", when)
	for _, t := range tasks {
		fmt.Fprintf(w, "%d\t%s\t%s\t%d/%d\t%d\t%s\t%s\t%s\n", t.ID, t.Type, t.Status, t.AttemptsUsed, t.MaxAttempts,
			t.Priority, t.OwnerID, at(t), firstLine(t.LastError, 60))
	}
	return w.Flush()
}

func show(ctx context.Context, e *env, args []string) error {
	fs := newFlags("show")
	asJSON := fs.Bool("json", false, "")
	pos, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	id, err := taskID(pos[0])
	if err != nil {
		return err
	}
	t, err := e.client.Get(ctx, id)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(e.stdout, newTaskJSON(t))
	}
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	for _, row := range [][2]string{
		{"id", strconv.FormatInt(int64(t.ID), 10)}, {"type", t.Type}, {"status", string(t.Status)},
		{"attempts used", fmt.Sprintf("%d of %d", t.AttemptsUsed, t.MaxAttempts)}, {"fencing token", strconv.Itoa(t.Attempt)},
		{"priority", strconv.Itoa(t.Priority)}, {"owner", dash(t.OwnerID)}, {"key", dash(t.IdempotencyKey)}, {"work key", dash(t.WorkKey)},
		{"lease owner", dash(t.LeaseOwner)}, {"lease until", stamp(t.LeaseUntil)}, {"available at", stamp(t.AvailableAt)},
		{"created", stamp(t.CreatedAt)}, {"last started", stamp(t.StartedAt)}, {"finished", stamp(t.FinishedAt)}, {"result", dash(t.Result)},
		{"metadata", metadataText(t.Metadata)}, {"payload", string(t.Payload)},
	} {
		fmt.Fprintf(w, "%s:\t%s\n", row[0], row[1])
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if t.LastError != "" {
		fmt.Fprintf(e.stdout, "last error:\n%s\n", t.LastError)
	}
	return printAttempts(e.stdout, t.Attempts)
}

// printAttempts prints a task's history as a table, each error on its
// first line.
func printAttempts(out io.Writer, attempts []runtime.AttemptInfo) error {
	if len(attempts) == 0 {
		return nil
	}
	fmt.Fprintln(out, "attempts:")
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "  #\tOUTCOME\tWORKER\tSTARTED\tFINISHED\tDURATION\tERROR")
	for _, a := range attempts {
		duration := "-"
		if !a.FinishedAt.IsZero() {
			duration = a.Duration.Round(time.Millisecond).String()
			if a.Duration < time.Millisecond { // an attempt that failed at once: 48µs, not 0s
				duration = a.Duration.Round(time.Microsecond).String()
			}
		}
		fmt.Fprintf(w, "  %d\t%s\t%s\t%s\t%s\t%s\t%s\n", a.Attempt, a.Outcome, dash(a.Worker), stamp(a.StartedAt), stamp(a.FinishedAt),
			duration, dash(firstLine(a.Error, 80)))
	}
	return w.Flush()
}

func cancel(ctx context.Context, e *env, args []string) error {
	fs := newFlags("cancel")
	bulk := bulkFlags(fs)
	pos, err := parseThen(fs, args, bulk.positional)
	if err != nil {
		return err
	}
	if *bulk.all {
		return bulk.run(ctx, e, "cancel", e.client.CancelMatching)
	}
	id, err := taskID(pos[0])
	if err != nil {
		return err
	}
	if err := e.client.Cancel(ctx, id); err != nil {
		return err
	}
	t, err := e.client.Get(ctx, id)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "task %d is %s\n", id, t.Status)
	return nil
}

func retry(ctx context.Context, e *env, args []string) error {
	fs := newFlags("retry")
	bulk := bulkFlags(fs)
	pos, err := parseThen(fs, args, bulk.positional)
	if err != nil {
		return err
	}
	if *bulk.all {
		return bulk.run(ctx, e, "retry", e.client.RetryMatching)
	}
	id, err := taskID(pos[0])
	if err != nil {
		return err
	}
	if err := e.client.Retry(ctx, id); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "task %d is QUEUED again\n", id)
	return nil
}

func discard(ctx context.Context, e *env, args []string) error {
	fs := newFlags("discard")
	bulk := bulkFlags(fs)
	pos, err := parseThen(fs, args, bulk.positional)
	if err != nil {
		return err
	}
	if *bulk.all {
		return bulk.run(ctx, e, "discard", e.client.DiscardMatching)
	}
	id, err := taskID(pos[0])
	if err != nil {
		return err
	}
	if err := e.client.Discard(ctx, id); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "task %d is discarded\n", id)
	return nil
}

// purgeCountCap bounds purge's count of what it would delete.
const purgeCountCap = 1_000_000

func purge(ctx context.Context, e *env, args []string) error {
	fs := newFlags("purge")
	olderThan := fs.Duration("older-than", -1, "")
	batch := fs.Int("batch", 1000, "")
	dryRun := fs.Bool("dry-run", false, "")
	yes := fs.Bool("yes", false, "")
	if _, err := parse(fs, args, 0); err != nil {
		return err
	}
	if *olderThan < 0 || *batch <= 0 {
		return fmt.Errorf("%w: purge needs -older-than DURATION (e.g. 720h) and a -batch above 0", errUsage)
	}
	n, err := e.client.Purgeable(ctx, *olderThan, purgeCountCap)
	if err != nil {
		return err
	}
	what := fmt.Sprintf("%d finished tasks finished more than %s ago", n, *olderThan)
	if n == purgeCountCap {
		what = fmt.Sprintf("at least %d finished tasks finished more than %s ago", n, *olderThan)
	}
	switch {
	case n == 0:
		fmt.Fprintf(e.stdout, "nothing to purge: no task finished more than %s ago\n", *olderThan)
		return nil
	case *dryRun:
		fmt.Fprintf(e.stdout, "would purge %s (-dry-run: nothing deleted)\n", what)
		return nil
	case !*yes:
		return fmt.Errorf("%s: add -yes to delete them (-dry-run only counts)", what)
	}
	purged, err := e.client.Purge(ctx, *olderThan, *batch)
	if err != nil {
		return fmt.Errorf("purge stopped after %d tasks: %w", purged, err)
	}
	fmt.Fprintf(e.stdout, "purged %d finished tasks older than %s\n", purged, *olderThan)
	return nil
}

func stats(ctx context.Context, e *env, args []string) error {
	fs := newFlags("stats")
	asJSON := fs.Bool("json", false, "")
	if _, err := parse(fs, args, 0); err != nil {
		return err
	}
	st, err := e.client.Stats(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(e.stdout, newStatsJSON(st))
	}
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "TYPE\tSTATUS\tTASKS")
	for _, c := range st.Counts {
		fmt.Fprintf(w, "%s\t%s\t%d\n", c.Type, c.Status, c.Tasks)
	}
	fmt.Fprintln(w, "\nTYPE\tOLDEST QUEUED")
	for _, typ := range sortedKeys(st.OldestQueued) {
		fmt.Fprintf(w, "%s\t%s (%s)\n", typ, stamp(st.OldestQueued[typ]), relative(st.OldestQueued[typ]))
	}
	fmt.Fprintln(w, "\nWORKER\tRUNNING")
	for _, owner := range sortedKeys(st.RunningByWorker) {
		fmt.Fprintf(w, "%s\t%d\n", owner, st.RunningByWorker[owner])
	}
	if len(st.Paused) > 0 {
		fmt.Fprintln(w, "\nPAUSED TYPE\tSINCE")
		for _, typ := range sortedKeys(st.Paused) {
			fmt.Fprintf(w, "%s\t%s (%s)\n", typ, stamp(st.Paused[typ]), relative(st.Paused[typ]))
		}
	}
	return w.Flush()
}

// pause stops every worker from claiming tasks of a type, and warns when
// no live worker handles it (a typo, or a type not deployed yet).
func pause(ctx context.Context, e *env, args []string) error {
	fs := newFlags("pause")
	force := fs.Bool("force", false, "")
	pos, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	typ := pos[0]
	live, err := e.client.Workers(ctx)
	if err != nil {
		return err
	}
	handled := slices.ContainsFunc(live, func(w runtime.WorkerInfo) bool { _, ok := w.TaskLimits[typ]; return ok })
	if !handled && !*force {
		stored, err := e.client.List(ctx, runtime.Filter{Type: typ, Limit: 1})
		if err != nil {
			return err
		}
		if len(stored) == 0 {
			return fmt.Errorf("no task of type %s is stored and none of the %d live workers handles it: check the name "+
				"(leasectl stats lists the stored types), or add -force to pause it before its first task", typ, len(live))
		}
	}
	if err := e.client.Pause(ctx, typ); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "paused %s: no worker claims its tasks until leasectl resume %s; running ones finish\n", typ, typ)
	if !handled {
		fmt.Fprintf(e.stdout, "note: none of the %d live workers handles %s\n", len(live), typ)
	}
	return nil
}

func resume(ctx context.Context, e *env, args []string) error {
	pos, err := parse(newFlags("resume"), args, 1)
	if err != nil {
		return err
	}
	st, err := e.client.BoundedStats(ctx, 1) // reads the paused types, and at most a few tasks
	if err != nil {
		return err
	}
	if _, paused := st.Paused[pos[0]]; !paused {
		fmt.Fprintf(e.stdout, "%s was not paused: nothing changed\n", pos[0])
		return nil
	}
	if err := e.client.Resume(ctx, pos[0]); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "resumed %s: workers claim its tasks from their next poll\n", pos[0])
	return nil
}

func workers(ctx context.Context, e *env, args []string) error {
	fs := newFlags("workers")
	asJSON := fs.Bool("json", false, "")
	if _, err := parse(fs, args, 0); err != nil {
		return err
	}
	live, err := e.client.Workers(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		out := make([]workerJSON, len(live))
		for i, w := range live {
			out[i] = workerJSON(w)
		}
		return writeJSON(e.stdout, out)
	}
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "WORKER\tHOST\tPID\tSTARTED\tALIVE UNTIL\tSLOTS\tGLOBAL LIMIT\tTASK TYPES (LIMIT)")
	for _, wk := range live {
		types := make([]string, 0, len(wk.TaskLimits))
		for _, t := range sortedKeys(wk.TaskLimits) {
			types = append(types, fmt.Sprintf("%s (%s)", t, limitText(wk.TaskLimits[t])))
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%d\t%s\t%s\n", wk.ID, wk.Host, wk.PID, stamp(wk.StartedAt), stamp(wk.AliveUntil),
			wk.MaxConcurrency, limitText(wk.GlobalLimit), strings.Join(types, ", "))
	}
	return w.Flush()
}

func keys(ctx context.Context, e *env, args []string) error {
	fs := newFlags("keys")
	asJSON := fs.Bool("json", false, "")
	limit := fs.Int("limit", 100, "")
	if _, err := parse(fs, args, 0); err != nil {
		return err
	}
	if *limit <= 0 {
		return fmt.Errorf("%w: -limit must be above 0, got %d", errUsage, *limit)
	}
	list, err := e.client.Keys(ctx, *limit)
	if err != nil {
		return err
	}
	if *asJSON {
		out := make([]keyJSON, len(list))
		for i, k := range list {
			out[i] = keyJSON{Type: k.Type, Key: k.Key, Limit: k.Limit, BlockOnFailure: k.BlockOnFailure,
				Running: k.Running, Holding: k.Holding, Waiting: k.Waiting, AtLimit: k.AtLimit(),
				Rate: k.Rate, StartsInWindow: k.StartsInWindow, AtRate: k.AtRate(), Share: k.Share}
			if k.Rate > 0 {
				out[i].RateWindow = k.RateWindow.String()
			}
		}
		return writeJSON(e.stdout, out)
	}
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "TYPE\tKEY\tLIMIT\tRUNNING\tHOLDING\tWAITING\tAT LIMIT\tRATE\tIN WINDOW\tAT RATE\tFAIR SHARE")
	for _, k := range list {
		limit := limitText(k.Limit)
		if k.BlockOnFailure {
			limit += " (blocks on failure)"
		}
		rate, inWindow, atRate := "none", "-", "-"
		if k.Rate > 0 {
			rate, inWindow, atRate = fmt.Sprintf("%d/%s", k.Rate, k.RateWindow), strconv.Itoa(k.StartsInWindow), yesNo(k.AtRate())
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\n", k.Type, k.Key, limit, k.Running, k.Holding, k.Waiting,
			yesNo(k.AtLimit()), rate, inWindow, atRate, limitText(k.Share))
	}
	return w.Flush()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// limitText shows a limit, 0 as "none".
func limitText(n int) string {
	if n == 0 {
		return "none"
	}
	return strconv.Itoa(n)
}
