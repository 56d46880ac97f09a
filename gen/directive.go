package gen

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// directivePrefix starts a task annotation in a type's doc comment.
const directivePrefix = "//leasegen:task"

// options are the parsed options of one //leasegen:task directive.
type options struct {
	Name        string
	Priority    int
	MaxAttempts int // 0: the runtime's default
	Timeout     time.Duration
	Lease       time.Duration
	Backoff     time.Duration
	Concurrency int
	Idempotent  bool
	Unique      bool
}

// optionError is a problem with one option, at a byte offset into the
// directive's text.
type optionError struct {
	Offset int
	Msg    string
	Hint   string
}

// optionNames lists every option, for hints.
var optionNames = []string{"name", "priority", "max_attempts", "timeout", "lease", "backoff", "concurrency", "idempotent", "unique"}

var taskNamePattern = regexp.MustCompile(`^[a-z][a-z0-9_.:-]*$`)

// maxTaskNameLen is the runtime's limit on a task type.
const maxTaskNameLen = 128

// parseDirective parses the text after "//leasegen:task". It returns every
// problem, each at its offset into text.
func parseDirective(text string) (options, []optionError) {
	var o options
	var errs []optionError
	seen := map[string]bool{}
	for _, f := range fields(text) {
		key, value, hasValue := strings.Cut(f.text, "=")
		fail := func(hint, format string, args ...any) {
			errs = append(errs, optionError{Offset: f.offset, Msg: fmt.Sprintf(format, args...), Hint: hint})
		}
		if seen[key] {
			fail("", "option %q given twice", key)
			continue
		}
		seen[key] = true
		flag := func(target *bool) {
			if hasValue {
				fail(fmt.Sprintf("write %s alone", key), "option %s takes no value", key)
				return
			}
			*target = true
		}
		needValue := func() bool {
			if !hasValue || value == "" {
				fail(fmt.Sprintf("write %s=VALUE", key), "option %s needs a value", key)
				return false
			}
			return true
		}
		switch key {
		case "idempotent":
			flag(&o.Idempotent)
		case "unique":
			flag(&o.Unique)
		case "name":
			if !needValue() {
				continue
			}
			if !taskNamePattern.MatchString(value) || len(value) > maxTaskNameLen {
				fail("use lower-case letters, digits and _ . : - , starting with a letter, at most 128 bytes", "bad task name %q", value)
				continue
			}
			o.Name = value
		case "priority":
			if needValue() {
				o.Priority = parseInt(value, -1<<31, 1<<31-1, func(msg string) { fail("", "priority %s", msg) })
			}
		case "max_attempts":
			if needValue() {
				o.MaxAttempts = parseInt(value, 1, 1<<31-1, func(msg string) { fail("", "max_attempts %s", msg) })
			}
		case "concurrency":
			if needValue() {
				o.Concurrency = parseInt(value, 1, 1<<31-1, func(msg string) { fail("", "concurrency %s", msg) })
			}
		case "timeout":
			if needValue() {
				o.Timeout = parseDuration(value, time.Millisecond, func(msg string) { fail("write a Go duration such as 90s or 5m", "timeout %s", msg) })
			}
		case "lease":
			if needValue() {
				o.Lease = parseDuration(value, 10*time.Millisecond, func(msg string) { fail("write a Go duration such as 30s or 2m", "lease %s", msg) })
			}
		case "backoff":
			if needValue() {
				o.Backoff = parseDuration(value, time.Millisecond, func(msg string) {
					fail("write the first retry's delay as a Go duration, such as 500ms or 10s", "backoff %s", msg)
				})
			}
		default:
			hint := didYouMean(key, optionNames)
			if hint == "" {
				hint = "the options are " + strings.Join(optionNames, ", ")
			}
			fail(hint, "unknown option %q", key)
		}
	}
	return o, errs
}

type field struct {
	text   string
	offset int
}

// fields splits s on spaces and tabs, keeping each field's offset.
func fields(s string) []field {
	var out []field
	start := -1
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ' ' || s[i] == '\t' {
			if start >= 0 {
				out = append(out, field{text: s[start:i], offset: start})
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	return out
}

func parseInt(s string, lo, hi int, fail func(string)) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		fail(fmt.Sprintf("must be an integer, got %q", s))
		return 0
	}
	if n < lo || n > hi {
		fail(fmt.Sprintf("must be in %d..%d, got %d", lo, hi, n))
		return 0
	}
	return n
}

func parseDuration(s string, least time.Duration, fail func(string)) time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		fail(fmt.Sprintf("must be a duration, got %q", s))
		return 0
	}
	if d < least {
		fail(fmt.Sprintf("must be at least %s, got %s", least, d))
		return 0
	}
	return d
}
