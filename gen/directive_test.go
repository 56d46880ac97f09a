package gen

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseDirective(t *testing.T) {
	t.Parallel()
	got, errs := parseDirective(" name=a.b priority=-2 max_attempts=3 timeout=1m lease=30s backoff=2s concurrency=7 idempotent unique")
	want := options{Name: "a.b", Priority: -2, MaxAttempts: 3, Timeout: time.Minute, Lease: 30 * time.Second,
		Backoff: 2 * time.Second, Concurrency: 7, Idempotent: true, Unique: true}
	if len(errs) != 0 || got != want {
		t.Errorf("parseDirective = %+v, %v; want %+v", got, errs, want)
	}
	_, errs = parseDirective("  prio=1\tname=")
	wantErrs := []optionError{
		{Offset: 2, Msg: `unknown option "prio"`, Hint: `did you mean "priority"?`},
		{Offset: 9, Msg: "option name needs a value", Hint: "write name=VALUE"},
	}
	if diff := cmp.Diff(wantErrs, errs, cmp.AllowUnexported(optionError{})); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

func TestNames(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][2]string{
		"ImportPayload":    {"Import", "import"},
		"SendEmailPayload": {"SendEmail", "send_email"},
		"HTTPCallPayload":  {"HTTPCall", "http_call"},
		"resizeJob":        {"ResizeJob", "resize_job"},
		"Payload":          {"Payload", "payload"},
	} {
		goName := goName(in)
		if got := [2]string{goName, snakeCase(goName)}; got != want {
			t.Errorf("%s: %v, want %v", in, got, want)
		}
	}
}

func TestDurationCode(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		5 * time.Minute:         "5 * time.Minute",
		time.Hour:               "time.Hour",
		1500 * time.Millisecond: "1500 * time.Millisecond",
		3:                       "time.Duration(3)",
	} {
		if got := fmt.Sprintf("%#v", durationCode(d)); got != want {
			t.Errorf("durationCode(%s) = %s, want %s", d, got, want)
		}
	}
}

// FuzzParseDirective: any directive text parses without panicking, and
// every error points inside the text.
func FuzzParseDirective(f *testing.F) {
	for _, seed := range []string{"", " idempotent", " name=x priority=-1", " timeout=5m lease=", " max_attempt=5 a=b=c", "\tunique\t\t"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		_, errs := parseDirective(text)
		for _, e := range errs {
			if e.Offset < 0 || e.Offset >= len(text) || e.Msg == "" {
				t.Fatalf("error %+v out of range for %q", e, text)
			}
		}
	})
}
