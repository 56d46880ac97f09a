package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// installRecipe is the README's block between the install-recipe markers.
var (
	installRecipe = regexp.MustCompile("(?s)<!-- install-recipe[^>]*-->\\s*```sh\\n(.*?)```")
	tracingRecipe = regexp.MustCompile("(?s)<!-- tracing-recipe[^>]*-->\\s*```sh\\n(.*?)```")
)

// The README's install recipe works from a checkout, in a new module
// outside the tree: after it, a service with its own payload types
// generates, builds and runs a task on SQLite.
func TestInstallRecipe(t *testing.T) {
	t.Parallel()
	dir, sh := newModule(t, installRecipe)
	writeFile(t, dir, "thumbs/payloads.go", `package thumbs

//go:generate go tool leasegen

// ThumbnailPayload renders one thumbnail.
//
//leasegen:task lease=5s unique
type ThumbnailPayload struct {
	ImageID string `+"`json:\"image_id\" leasegen:\"key\"`"+`
}
`)
	writeFile(t, dir, "main.go", `package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver/leasesqlite"

	"example.com/thumbs/thumbs"
)

type service struct{ done chan string }

func (s service) HandleThumbnail(_ context.Context, _ *runtime.Task, p thumbs.ThumbnailPayload) error {
	s.done <- p.ImageID
	return nil
}

func main() {
	ctx := context.Background()
	db, err := leasesqlite.Open(filepath.Join(os.Args[1], "tasks.db"))
	check(err)
	engine := runtime.NewEngine(leasesqlite.New(db))
	check(engine.Migrate(ctx))
	w, err := runtime.NewWorker(engine, runtime.Config{})
	check(err)
	s := service{done: make(chan string, 1)}
	check(thumbs.Register(w, s))
	check(w.Start(ctx))
	defer w.Stop(ctx)
	rt, err := runtime.NewClient(engine, runtime.ClientConfig{})
	check(err)
	_, err = thumbs.NewClient(rt).EnqueueThumbnail(ctx, thumbs.ThumbnailPayload{ImageID: "img-1"})
	check(err)
	select {
	case id := <-s.done:
		fmt.Println("ran", id)
	case <-time.After(30 * time.Second):
		check(fmt.Errorf("the task did not run"))
	}
}

`+checkFunc)
	buildAndRun(t, dir, sh, "go mod tidy && go generate ./... && go build -o svc .", "ran img-1")
}

// newModule makes a new module outside the tree and runs the README's
// recipes in it (the install recipe first); sh runs more in it.
func newModule(t *testing.T, recipes ...*regexp.Regexp) (dir string, sh func(string)) {
	t.Helper()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	sh = func(script string) {
		t.Helper()
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "LEASEGEN="+repo, "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", script, err, out)
		}
	}
	sh("go mod init example.com/thumbs")
	for _, recipe := range recipes {
		m := recipe.FindSubmatch(readme)
		if m == nil {
			t.Fatalf("README.md has no block matching %s", recipe)
		}
		sh(string(m[1]))
	}
	return dir, sh
}

// The README's tracing recipe works from a checkout after the install
// recipe: a service with leaseotel's middlewares builds and runs a task
// in a span of a real tracer provider.
func TestTracingRecipe(t *testing.T) {
	t.Parallel()
	dir, sh := newModule(t, installRecipe, tracingRecipe)
	writeFile(t, dir, "main.go", `package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/leasegen/leasegen/contrib/leaseotel"
	"github.com/leasegen/leasegen/runtime"
	"github.com/leasegen/leasegen/runtime/driver/leasesqlite"
)

func main() {
	ctx := context.Background()
	db, err := leasesqlite.Open(filepath.Join(os.Args[1], "tasks.db"))
	check(err)
	engine := runtime.NewEngine(leasesqlite.New(db))
	check(engine.Migrate(ctx))
	tracing := leaseotel.New(leaseotel.Config{TracerProvider: sdktrace.NewTracerProvider()})
	w, err := runtime.NewWorker(engine, runtime.Config{Middleware: []runtime.Middleware{tracing.Middleware()}})
	check(err)
	traced := make(chan bool, 1)
	check(w.Handle("ping", func(ctx context.Context, _ *runtime.Task) error {
		traced <- trace.SpanContextFromContext(ctx).IsValid()
		return nil
	}))
	check(w.Start(ctx))
	defer w.Stop(ctx)
	client, err := runtime.NewClient(engine, runtime.ClientConfig{EnqueueMiddleware: []runtime.EnqueueMiddleware{tracing.EnqueueMiddleware()}})
	check(err)
	_, err = client.Enqueue(ctx, "ping", nil)
	check(err)
	fmt.Println("ran in a span:", <-traced)
}

`+checkFunc)
	buildAndRun(t, dir, sh, "go mod tidy && go build -o svc .", "ran in a span: true")
}

// checkFunc ends the test services' main.go: a failure exits 1.
const checkFunc = `
func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
`

// buildAndRun builds the service in dir with build and runs it on a new
// directory, failing t unless its output holds want.
func buildAndRun(t *testing.T, dir string, sh func(string), build, want string) {
	t.Helper()
	sh(build)
	out, err := exec.Command(filepath.Join(dir, "svc"), t.TempDir()).CombinedOutput()
	if err != nil || !strings.Contains(string(out), want) {
		t.Fatalf("the service built from the README's recipes: %v\n%s", err, out)
	}
}

func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
