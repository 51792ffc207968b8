package playtest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/lang"
	"github.com/google/go-cmp/cmp"
)

// execPlaybook starts programs three ways: a shell step, a git.* call,
// and a shell step of a sub-playbook. Each leaves a file behind when it
// runs. It fails whatever happens, and its test expects that, so that a
// refused step cannot pass for an expected failure.
var execPlaybook = map[string]string{
	"main/main.hcl": `
playbook "main" {}
step "build" {
  continue_on_error = true
  shell {
    command = ["touch", "build-ran"]
  }
}
step "status" {
  continue_on_error = true
  call "git.status" {}
}
step "mocked" {
  shell {
    command = ["touch", "mocked-ran"]
  }
}
step "phase" {
  continue_on_error = true
  playbook {
    source = "../sub"
  }
  gate {
    otherwise {
      fail = "always"
    }
  }
}
`,
	"sub/sub.hcl": `
playbook "sub" {}
step "deploy" {
  shell {
    command = ["touch", "deploy-ran"]
  }
}
`,
	"main/main_test.hcl": `
test "fails anyway" {
  mock "mocked" {
    output = "mocked"
  }
  expect {
    status = "failed"
  }
}
`,
}

func loadExecPlaybook(t *testing.T) (*lang.Playbook, string, *lang.Test) {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, src := range execPlaybook {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ld := &lang.Loader{Builtins: builtins.Funcs().Names(), Signatures: builtins.Funcs(), DecodeAnswer: agent.CheckAnswer, CheckScript: builtins.CheckScriptTemplate, Drivers: agent.DriverSchema{}}
	ref := filepath.Join(dir, "main")
	pb, diags := ld.Load(ref)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	files, err := ld.TestFiles(ref)
	if err != nil {
		t.Fatal(err)
	}
	tests, diags := lang.LoadTests(pb, files)
	if diags.HasErrors() || len(tests) != 1 {
		t.Fatalf("%d tests: %v", len(tests), diags)
	}
	return pb, ref, tests[0]
}

// TestNoExecRefusesUnmockedPrograms checks that with NoExec no program
// runs, in the playbook or in a sub-playbook, and that the test fails
// naming each step that would have run one, although the run ended as the
// test expected.
func TestNoExecRefusesUnmockedPrograms(t *testing.T) {
	pb, ref, test := loadExecPlaybook(t)
	work := t.TempDir()
	res, err := Run(context.Background(), pb, ref, test, Options{Workdir: work, NoExec: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != "failed" {
		t.Errorf("status %q, want failed", res.Status)
	}
	want := []string{
		"step build: a shell step without a mock; with NoExec (apl test --no-exec) a test runs no program, so mock the step",
		"step status: a git.status call, which runs git, without a mock; with NoExec (apl test --no-exec) a test runs no program, so mock the step",
		"step deploy: a shell step without a mock; with NoExec (apl test --no-exec) a test runs no program, so mock the step",
	}
	if diff := cmp.Diff(want, res.Mismatches); diff != "" {
		t.Errorf("mismatches (-want +got):\n%s", diff)
	}
	if res.Passed() {
		t.Error("the test passed")
	}
	left, _ := os.ReadDir(work)
	for _, e := range left {
		if strings.HasSuffix(e.Name(), "-ran") {
			t.Errorf("%s ran", e.Name())
		}
	}
}

// TestUnmockedShellRunsForReal checks the default the NoExec option
// guards against: a shell step without a mock runs, in the playbook and
// in its sub-playbook.
func TestUnmockedShellRunsForReal(t *testing.T) {
	pb, ref, test := loadExecPlaybook(t)
	work := t.TempDir()
	res, err := Run(context.Background(), pb, ref, test, Options{Workdir: work})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Passed() {
		t.Errorf("mismatches %q", res.Mismatches)
	}
	for _, f := range []string{"build-ran", "deploy-ran"} {
		if _, err := os.Stat(filepath.Join(work, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(work, "mocked-ran")); err == nil {
		t.Error("the mocked step ran")
	}
}
