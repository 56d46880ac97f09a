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

// parse parses args and checks the number of positional arguments.
func parse(fs *flag.FlagSet, args []string, positional int) error {
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %s: %v", errUsage, fs.Name(), err)
	}
	if fs.NArg() != positional {
		return fmt.Errorf("%w: %s takes %d argument(s), got %d", errUsage, fs.Name(), positional, fs.NArg())
	}
	return nil
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

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
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
