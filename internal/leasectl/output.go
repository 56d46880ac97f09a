package leasectl

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/leasegen/leasegen/runtime"
)

// newFlags returns a quiet flag set: errors become usage errors.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// parse parses args, flags before or after the positional arguments, and
// checks how many positional arguments there are. It returns them.
func parse(fs *flag.FlagSet, args []string, positional int) ([]string, error) {
	return parseThen(fs, args, func() int { return positional })
}

// parseThen is parse for a command whose flags decide how many
// positional arguments it takes: positional is asked after the parse.
func parseThen(fs *flag.FlagSet, args []string, positional func() int) ([]string, error) {
	var rest []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", errUsage, fs.Name(), err)
		}
		if fs.NArg() == 0 {
			break
		}
		rest = append(rest, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if n := positional(); len(rest) != n {
		return nil, fmt.Errorf("%w: %s takes %d argument(s), got %d", errUsage, fs.Name(), n, len(rest))
	}
	return rest, nil
}

func taskID(s string) (runtime.TaskID, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%w: %q is not a task id", errUsage, s)
	}
	return runtime.TaskID(n), nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// dash shows an empty value as "-".
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// relative says how far t is from now: "3m2s ago", or "in 59m58s" for an
// instant ahead (a queued task delayed past now).
func relative(t time.Time) string {
	d := time.Until(t).Round(time.Second)
	if d > 0 {
		return "in " + d.String()
	}
	return (-d).String() + " ago"
}

func firstLine(s string, limit int) string {
	line, _, _ := strings.Cut(s, "\n")
	if len(line) > limit {
		line = line[:limit] + "..."
	}
	return line
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// metadataText shows a task's metadata as key=value pairs, sorted.
func metadataText(md map[string]string) string {
	pairs := make([]string, 0, len(md))
	for _, k := range sortedKeys(md) {
		pairs = append(pairs, k+"="+md[k])
	}
	return dash(strings.Join(pairs, " "))
}
