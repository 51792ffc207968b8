//go:build !race

// The in-process Temporal server is too slow under the race detector
// (temporal_test.go).

package temporal

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apl-lang/apl/interp"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/server/temporaltest"
)

// lockedBuffer is a bytes.Buffer the SDK's goroutines may log into.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A step the run stops (its time limit passed, or apl cancel) stopped as
// asked: its worker logs no error for it, where the SDK logged "Activity
// error." at ERROR for every such step, which an operator reads as a
// worker's fault.
func TestStoppedStepLogsNoWorkerError(t *testing.T) {
	ts := temporaltest.NewServer(temporaltest.WithT(t))
	var logs lockedBuffer
	wc := ts.NewClientWithOptions(client.Options{
		Logger: log.NewStructuredLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelError}))),
	})
	t.Cleanup(wc.Close)
	startWorker(t, wc, "stopped", t.TempDir())
	ref := filepath.Join(t.TempDir(), "main.hcl")
	os.WriteFile(ref, []byte(`playbook "stopped" {}
limits { timeout = "2s" }
step "slow" { shell { command = ["sleep", "30"] } }
`), 0o644)
	pb, diags := loader().Load(ref)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := ts.GetDefaultClient()
	id, err := Start(ctx, c, "stopped", pb, ref, interp.Options{RunID: "stopped"})
	if err != nil {
		t.Fatal(err)
	}
	res, _, err := Watch(ctx, c, id, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != interp.StatusFailed || !strings.Contains(res.Reason, "limits.timeout") {
		t.Fatalf("run ended %s: %s", res.Status, res.Reason)
	}
	if strings.Contains(logs.String(), "Activity error.") {
		t.Errorf("the worker logged the stopped step as an error:\n%s", logs.String())
	}
}
