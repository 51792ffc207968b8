package interp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apl-lang/apl/builtins"
)

// blockingShell holds every command until release is closed.
type blockingShell struct {
	started chan struct{}
	release chan struct{}
}

func (s *blockingShell) Run(ctx context.Context, spec builtins.ShellSpec) (builtins.ShellResult, error) {
	s.started <- struct{}{}
	<-s.release
	return builtins.ShellResult{}, nil
}

// Issue 9: two runs on one state { path } shared the file with no lock:
// run A's completed steps vanished, and apl resume A reported run B and
// ran A's steps again.
func TestSharedStatePathIsLocked(t *testing.T) {
	pb := load(t, `
playbook "shared" {}
state { path = "st/state.json" }
step "slow" { shell { command = ["slow"] } }
`)
	work := t.TempDir()
	sh := &blockingShell{started: make(chan struct{}), release: make(chan struct{})}
	type ran struct {
		res *Result
		err error
	}
	done := make(chan ran)
	go func() {
		res, err := Start(context.Background(), pb, "test.hcl", Options{Workdir: work, NoSync: true, RunID: "a", Shell: sh})
		done <- ran{res, err}
	}()
	<-sh.started
	_, err := Start(context.Background(), pb, "test.hcl", Options{Workdir: work, NoSync: true, RunID: "b", Shell: sh})
	var inUse *StateInUseError
	if !errors.As(err, &inUse) || inUse.RunID != "a" {
		t.Fatalf("a second run on the same state file: %v", err)
	}
	close(sh.release)
	a := <-done
	if a.err != nil || a.res.Status != StatusCompleted {
		t.Fatalf("run a: %v %+v", a.err, a.res)
	}
	// Once a has ended, b may run; a's state is then b's, and resuming a
	// says so instead of reporting b.
	sh.started = make(chan struct{}, 1)
	if _, err := Start(context.Background(), pb, "test.hcl", Options{Workdir: work, NoSync: true, RunID: "b", Shell: sh}); err != nil {
		t.Fatal(err)
	}
	_, err = Resume(context.Background(), pb, a.res.Dir, Options{NoSync: true, Shell: sh, From: "slow"})
	if err == nil || !strings.Contains(err.Error(), "now holds run b") {
		t.Errorf("resume a: %v", err)
	}
}

// Issue 9: a planted .apl symlink must not take the run directory, or a
// state block's directory, outside the project.
func TestPlantedSymlinksCannotMoveRunState(t *testing.T) {
	for name, tc := range map[string]struct{ link, src string }{
		"run directory": {".apl", `
playbook "p" {}
step "s" { shell { command = ["true"] } }
`},
		"state directory": {".autopilot", `
playbook "p" {}
state { path = ".autopilot/state.json" }
step "s" { shell { command = ["true"] } }
`},
	} {
		t.Run(name, func(t *testing.T) {
			work, outside := t.TempDir(), t.TempDir()
			if err := os.Symlink(outside, filepath.Join(work, tc.link)); err != nil {
				t.Fatal(err)
			}
			_, err := Start(context.Background(), load(t, tc.src), "test.hcl", Options{Workdir: work, NoSync: true})
			if !errors.Is(err, builtins.ErrOutsideWorkdir) {
				t.Errorf("a run with %s planted as a symlink out of the project: %v", tc.link, err)
			}
			if ents, _ := os.ReadDir(outside); len(ents) > 0 {
				t.Errorf("the run wrote outside the project: %v", ents)
			}
		})
	}
}
