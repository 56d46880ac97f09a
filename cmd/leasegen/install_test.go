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
var installRecipe = regexp.MustCompile("(?s)<!-- install-recipe[^>]*-->\\s*```sh\\n(.*?)```")

// The README's install recipe works from a checkout, in a new module
// outside the tree: after it, a service with its own payload types
// generates, builds and runs a task on SQLite.
func TestInstallRecipe(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := installRecipe.FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md has no install-recipe block")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sh := func(script string) {
		t.Helper()
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "LEASEGEN="+repo, "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", script, err, out)
		}
	}
	sh("go mod init example.com/thumbs")
	sh(string(m[1]))
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

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
`)
	sh("go mod tidy && go generate ./... && go build -o svc .")
	out, err := exec.Command(filepath.Join(dir, "svc"), t.TempDir()).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ran img-1") {
		t.Fatalf("the service built from the recipe: %v\n%s", err, out)
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
