package gen

import (
	"encoding/json"
	"fmt"
	"go/token"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/leasegen/leasegen/internal/periodic"
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
	// KeyConcurrency bounds the running tasks of one concurrency key
	// (key_concurrency=N); Sequential runs a key's tasks one at a time in
	// enqueue order (sequential, or sequential=block to hold the key
	// after a failure).
	KeyConcurrency int
	Sequential     bool
	BlockOnFailure bool
	// Rate bounds the starts of the type (rate=N/DUR) and KeyRate those
	// of one concurrency key (key_rate=N/DUR) in any window of that
	// length.
	Rate    rate
	KeyRate rate
	// Fair shares the type's claims among its concurrency keys (fair).
	Fair bool

	// Result names the type of this package that the task's handler
	// returns (result=T): stored as JSON with the completion, read back
	// typed by WaitX.
	Result string

	// A periodic task's schedule: Cron (in Zone) or Every.
	Cron        string
	Zone        string
	Every       time.Duration
	Misfire     string // "" for the runtime's default (once)
	SkipOverlap bool
	Payload     string // each tick's payload, JSON; "" for {}
}

// Periodic reports whether the task has a schedule.
func (o options) Periodic() bool { return o.Cron != "" || o.Every != 0 }

// optionError is a problem with one option, at a byte offset into the
// directive's text.
type optionError struct {
	Offset int
	Msg    string
	Hint   string
}

// optionNames lists every option, for hints.
var optionNames = []string{"name", "priority", "max_attempts", "timeout", "lease", "backoff", "concurrency", "idempotent", "unique", "result",
	"key_concurrency", "sequential", "rate", "key_rate", "fair", "cron", "tz", "every", "misfire", "overlap", "payload"}

var taskNamePattern = regexp.MustCompile(`^[a-z][a-z0-9_.:-]*$`)

// maxTaskNameLen is the runtime's limit on a task type.
const maxTaskNameLen = 128

// parseDirective parses the text after "//leasegen:task". It returns every
// problem, each at its offset into text.
func parseDirective(text string) (options, []optionError) {
	var o options
	var errs []optionError
	seen := map[string]int{} // option -> offset
	for _, f := range fields(text) {
		key, value, hasValue := strings.Cut(f.text, "=")
		fail := func(hint, format string, args ...any) {
			errs = append(errs, optionError{Offset: f.offset, Msg: fmt.Sprintf(format, args...), Hint: hint})
		}
		if _, dup := seen[key]; dup {
			fail("", "option %q given twice", key)
			continue
		}
		seen[key] = f.offset
		if v, ok := unquote(value); !ok {
			fail(`end the value with the quote it starts with; quotes do not nest or escape`, "unterminated quote in option %s", key)
			continue
		} else {
			value = v
		}
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
		case "fair":
			flag(&o.Fair)
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
		case "result":
			if needValue() {
				if !token.IsIdentifier(value) {
					fail("name a type of this package: result=ImportResult", "result %q is not a type name", value)
					continue
				}
				o.Result = value
			}
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
		case "key_concurrency":
			if needValue() {
				o.KeyConcurrency = parseInt(value, 1, 1<<31-1, func(msg string) { fail("", "key_concurrency %s", msg) })
			}
		case "sequential":
			o.Sequential = true
			switch {
			case !hasValue || value == "continue":
			case value == "block":
				o.BlockOnFailure = true
			default:
				fail("write sequential (a failed task lets the next start) or sequential=block (it holds the key until retried or discarded)",
					"unknown sequential rule %q", value)
			}
		case "rate", "key_rate":
			if !needValue() {
				continue
			}
			r, problem := parseRate(value)
			if problem != "" {
				fail("write starts per window, such as 100/1m or 5/1s", "%s %s", key, problem)
				continue
			}
			if key == "rate" {
				o.Rate = r
			} else {
				o.KeyRate = r
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
		case "cron":
			if needValue() {
				o.Cron = value
			}
		case "tz":
			if needValue() {
				o.Zone = value
			}
		case "every":
			if needValue() {
				o.Every = parseDuration(value, periodic.MinEvery, func(msg string) { fail("write a Go duration such as 15m or 1h", "every %s", msg) })
				if _, err := periodic.ParseEvery(o.Every); o.Every != 0 && err != nil {
					fail("write a Go duration such as 15m or 1h", "every: %v", err)
					o.Every = 0
				}
			}
		case "misfire":
			if needValue() {
				if _, err := periodic.ParseMisfire(value); err != nil {
					fail("", "%v", err)
					continue
				}
				o.Misfire = value
			}
		case "overlap":
			if needValue() {
				switch value {
				case "allow":
				case "skip":
					o.SkipOverlap = true
				default:
					fail("write overlap=allow (the default) or overlap=skip", "unknown overlap policy %q", value)
				}
			}
		case "payload":
			if needValue() {
				if !json.Valid([]byte(value)) {
					fail(`quote the JSON with single quotes: payload='{"region":"eu"}'`, "payload is not valid JSON: %s", value)
					continue
				}
				o.Payload = value
			}
		default:
			hint := didYouMean(key, optionNames)
			if hint == "" {
				hint = "the options are " + strings.Join(optionNames, ", ")
			}
			fail(hint, "unknown option %q", key)
		}
	}
	errs = append(errs, checkSchedule(o, seen)...)
	if _, both := seen["key_concurrency"]; both && o.Sequential {
		errs = append(errs, optionError{Offset: seen["sequential"], Hint: "sequential runs one task of a key at a time: drop key_concurrency=",
			Msg: "sequential and key_concurrency both given"})
	}
	errs = append(errs, checkRedundant(o, seen)...)
	return o, errs
}

// rate is a rate option: at most Limit starts in any Window.
type rate struct {
	Limit  int
	Window time.Duration
	Text   string // as written
}

// maxRateLimit is the runtime's limit on a rate's starts.
const maxRateLimit = 10_000

// fairShare is the runtime's share of the queue of a fairness key of
// weight 1.
const fairShare = 100

// parseRate parses N/DUR, or says what is wrong with it.
func parseRate(value string) (rate, string) {
	n, per, ok := strings.Cut(value, "/")
	if !ok {
		return rate{}, fmt.Sprintf("%q is not N/DUR", value)
	}
	limit, err := strconv.Atoi(n)
	if err != nil || limit < 1 || limit > maxRateLimit {
		return rate{}, fmt.Sprintf("starts %q must be a number in 1..%d (for more, use a shorter window)", n, maxRateLimit)
	}
	window, err := time.ParseDuration(per)
	if err != nil || window < time.Millisecond || window%time.Millisecond != 0 || window > 100*365*24*time.Hour {
		return rate{}, fmt.Sprintf("window %q must be a Go duration of whole milliseconds, from 1ms to 100 years", per)
	}
	return rate{Limit: limit, Window: window, Text: value}, ""
}

// checkRedundant reports limits that another keeps from ever binding: a
// key's rate over no longer a window than the type's that allows as many
// starts, a key's concurrency at or above the type's, fairness beside a
// sequence or a key's concurrency within the fair share.
func checkRedundant(o options, at map[string]int) []optionError {
	var errs []optionError
	if o.Rate.Limit > 0 && o.KeyRate.Limit >= o.Rate.Limit && o.KeyRate.Window <= o.Rate.Window {
		errs = append(errs, optionError{Offset: at["key_rate"], Hint: "drop key_rate=, or allow a key fewer starts than the type",
			Msg: fmt.Sprintf("key_rate=%s never binds: rate=%s lets the whole type start no more", o.KeyRate.Text, o.Rate.Text)})
	}
	switch {
	case o.Fair && o.Sequential:
		errs = append(errs, optionError{Offset: at["fair"], Hint: "drop fair: a sequence has one task queued at a time already",
			Msg: "fair never binds beside sequential"})
	case o.Fair && o.KeyConcurrency > 0 && o.KeyConcurrency <= fairShare:
		errs = append(errs, optionError{Offset: at["fair"], Hint: fmt.Sprintf("drop fair: a key has at most %d tasks queued already", o.KeyConcurrency),
			Msg: fmt.Sprintf("fair never binds beside key_concurrency=%d", o.KeyConcurrency)})
	}
	if o.Concurrency > 0 && o.KeyConcurrency >= o.Concurrency {
		errs = append(errs, optionError{Offset: at["key_concurrency"], Hint: "drop key_concurrency=, or allow a key fewer tasks than the type",
			Msg: fmt.Sprintf("key_concurrency=%d never binds: concurrency=%d lets no more of the type run at once", o.KeyConcurrency, o.Concurrency)})
	}
	return errs
}

// checkSchedule checks the schedule options together: each error is at
// the offset of the option it names.
func checkSchedule(o options, at map[string]int) []optionError {
	var errs []optionError
	fail := func(option, hint, format string, args ...any) {
		errs = append(errs, optionError{Offset: at[option], Msg: fmt.Sprintf(format, args...), Hint: hint})
	}
	_, hasCron := at["cron"]
	_, hasEvery := at["every"]
	switch {
	case hasCron && hasEvery:
		fail("every", "keep one of them", "cron and every both given")
	case o.Cron != "":
		if _, err := periodic.ParseCron(o.Cron, ""); err != nil {
			fail("cron", "", "%v", err)
		}
		if _, err := periodic.LoadZone(o.Zone); err != nil {
			fail("tz", "", "%v", err)
		}
	case o.Every != 0 && o.Zone != "":
		fail("tz", "an interval is the same in every zone: drop tz=, or use cron=", "tz applies to cron= only")
	}
	if !hasCron && !hasEvery {
		for _, option := range []string{"tz", "misfire", "overlap", "payload"} {
			if _, given := at[option]; given {
				fail(option, `add cron="0 3 * * *" or every=15m`, "%s applies to a periodic task", option)
			}
		}
	}
	return errs
}

// unquote strips the quotes around a value written "..." or '...'; false
// for a value that opens a quote it does not close.
func unquote(v string) (string, bool) {
	if v == "" || (v[0] != '"' && v[0] != '\'') {
		return v, true
	}
	if len(v) < 2 || v[len(v)-1] != v[0] {
		return "", false
	}
	return v[1 : len(v)-1], true
}

type field struct {
	text   string
	offset int
}

// fields splits s on spaces and tabs outside quotes ("..." or '...'),
// keeping each field's offset.
func fields(s string) []field {
	var out []field
	start := -1
	var quote byte // the open quote, 0 outside one
	for i := 0; i <= len(s); i++ {
		if i < len(s) && quote != 0 {
			if s[i] == quote {
				quote = 0
			}
			continue
		}
		if i < len(s) && start >= 0 && (s[i] == '"' || s[i] == '\'') {
			quote = s[i]
			continue
		}
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
