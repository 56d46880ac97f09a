package leasectl

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/leasegen/leasegen/runtime"
)

// filterFlags defines the flags that select tasks (-status, -type,
// -owner, -key, -error, -older-than) and returns the Filter they give.
func filterFlags(fs *flag.FlagSet) func() (runtime.Filter, error) {
	var f runtime.Filter
	status := fs.String("status", "", "")
	fs.StringVar(&f.Type, "type", "", "")
	fs.StringVar(&f.Owner, "owner", "", "")
	fs.DurationVar(&f.OlderThan, "older-than", 0, "")
	fs.StringVar(&f.Key, "key", "", "")
	fs.StringVar(&f.ErrorContains, "error", "", "")
	return func() (runtime.Filter, error) {
		if *status != "" {
			f.Status = runtime.Status(strings.ToUpper(*status))
			if !slices.Contains(runtime.AllStatuses, f.Status) {
				return f, fmt.Errorf("%w: -status %q: use one of %v", errUsage, *status, runtime.AllStatuses)
			}
		}
		if f.OlderThan < 0 {
			return f, fmt.Errorf("%w: -older-than must not be negative, got %s", errUsage, f.OlderThan)
		}
		return f, nil
	}
}

// bulk is a command's -all mode: the filter, a cap, a dry run and the
// confirmation.
type bulk struct {
	all, dryRun, yes *bool
	max              *int
	filter           func() (runtime.Filter, error)
}

// bulkDefaultMax is -max's default: an incident's action, not a purge.
const bulkDefaultMax = 10_000

func bulkFlags(fs *flag.FlagSet) bulk {
	return bulk{
		all:    fs.Bool("all", false, ""),
		dryRun: fs.Bool("dry-run", false, ""),
		yes:    fs.Bool("yes", false, ""),
		max:    fs.Int("max", bulkDefaultMax, ""),
		filter: filterFlags(fs),
	}
}

// positional is how many arguments the command takes: an id, or none
// with -all.
func (b bulk) positional() int {
	if *b.all {
		return 0
	}
	return 1
}

// run counts the tasks the filter matches (up to the cap), stops there on
// -dry-run or without -yes, and otherwise acts on them.
func (b bulk) run(ctx context.Context, e *env, verb string, act func(context.Context, runtime.Filter, int) (int, error)) error {
	f, err := b.filter()
	if err != nil {
		return err
	}
	if *b.max <= 0 {
		return fmt.Errorf("%w: -max must be above 0, got %d", errUsage, *b.max)
	}
	n, err := e.client.CountMatching(ctx, f, *b.max+1)
	if err != nil {
		return err
	}
	what := fmt.Sprintf("%d tasks match", n)
	if n > *b.max {
		what = fmt.Sprintf("more than %d tasks match; %s acts on the newest %d (-max)", *b.max, verb, *b.max)
	}
	switch {
	case n == 0:
		fmt.Fprintf(e.stdout, "no task matches: nothing to %s\n", verb)
		return nil
	case *b.dryRun:
		fmt.Fprintf(e.stdout, "%s (-dry-run: nothing changed)\n", what)
		return nil
	case !*b.yes:
		return fmt.Errorf("%s: add -yes to %s them (-dry-run only counts)", what, verb)
	}
	done, err := act(ctx, f, *b.max)
	if err != nil {
		return fmt.Errorf("%s stopped after %d tasks: %w", verb, done, err)
	}
	fmt.Fprintf(e.stdout, "%s: %d tasks", verb, done)
	if passed := min(n, *b.max) - done; passed > 0 {
		fmt.Fprintf(e.stdout, "; %d matching were passed over (a status %s does not apply to, or changed meanwhile)", passed, verb)
	}
	fmt.Fprintln(e.stdout)
	return nil
}
