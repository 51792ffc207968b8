//go:build !race

package temporal

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/apl-lang/apl/interp"
	"go.temporal.io/sdk/worker"
)

// A stdlib playbook comes from the worker's binary: a worker whose
// stdlib differs from the one the run started with (another apl version)
// fails the run at once, saying why, instead of walking another
// playbook.
func TestWorkerWithAnotherStdlibRefuses(t *testing.T) {
	c := server(t)
	stdlibOf := func(cmd string) fstest.MapFS {
		return fstest.MapFS{"greet/main.hcl": {Data: []byte(`playbook "greet" {}
step "say" {
  shell {
    command = ["` + cmd + `"]
  }
}
`)}}
	}
	client := loader()
	client.Stdlib = stdlibOf("true")
	workerLoader := loader()
	workerLoader.Stdlib = stdlibOf("false")
	w, err := NewWorker(c, "versions", Config{Loader: workerLoader, Workdir: t.TempDir(), HeartbeatTimeout: 5 * time.Second}, worker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)

	pb, diags := client.Load("stdlib:greet")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, _, err = Run(ctx, c, "versions", pb, "stdlib:greet", interp.Options{RunID: "versions-1"})
	if err == nil || !strings.Contains(err.Error(), "stdlib:greet on this worker is not the playbook run versions-1 started with") {
		t.Fatalf("run on a worker with another stdlib: %v", err)
	}
}
