package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/apl-lang/apl/lang"
	"github.com/apl-lang/apl/lang/diff"
)

// testStdlib is a stdlib of one playbook, with a prompt file, a test file
// and a file in a folder.
var testStdlib = fstest.MapFS{
	"review/main.hcl": {Data: []byte(`playbook "review" {
  description = "Review a change."
}

budget "review" {
  max_response_lines = 100
}

prompt "review" {
  template = file("prompts/review.md")
}

agent "reviewer" {
  budget = budget.review
}

step "review" {
  returns = object({ approved = bool })
  agent "reviewer" {
    prompt = prompt.review
  }
}
`)},
	"review/prompts/review.md": {Data: []byte("Review the change.\nReturn JSON: {\"approved\": bool}\n")},
	"review/main_test.hcl": {Data: []byte(`mock "review" {
  output = { approved = true }
}

test "approves" {
  expect {
    status = "completed"
  }
}
`)},
}

func testEnv() (*env, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return &env{stdout: &out, stderr: &errb, loader: &lang.Loader{Stdlib: testStdlib}}, &out, &errb
}

func exitOf(err error) int {
	var b bytes.Buffer
	return exitCode(&b, err)
}

// TestForkDiffRoundTrip forks a stdlib playbook and diffs the copy
// against it: nothing differs until the copy changes.
func TestForkDiffRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fork")
	e, out, errb := testEnv()
	if err := (&forkCmd{Name: "stdlib:review", Dir: dir}).Run(e); err != nil {
		t.Fatalf("fork: %v\n%s", err, errb)
	}
	if !strings.Contains(out.String(), "forked stdlib:review into "+dir+" (3 files)") {
		t.Errorf("fork said %q", out)
	}
	for _, f := range []string{"main.hcl", "main_test.hcl", "prompts/review.md", ".apl-fork"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("fork wrote no %s: %v", f, err)
		}
	}
	rec, _ := os.ReadFile(filepath.Join(dir, ".apl-fork"))
	pb, _ := e.loader.Load("stdlib:review")
	for _, want := range []string{`upstream    = "stdlib:review"`, `apl_version = "dev"`, `hash        = "sha256:` + pb.Hash + `"`} {
		if !strings.Contains(string(rec), want) {
			t.Errorf(".apl-fork lacks %s:\n%s", want, rec)
		}
	}

	e, out, _ = testEnv()
	if err := (&diffCmd{A: dir, B: "stdlib:review"}).Run(e); err != nil || out.Len() > 0 {
		t.Fatalf("diff of a fresh fork: exit %d, output %q", exitOf(err), out)
	}

	// A fork never overwrites.
	e, _, _ = testEnv()
	err := (&forkCmd{Name: "review", Dir: dir}).Run(e)
	if exitOf(err) != exitUsage || !strings.Contains(err.Error(), "is not empty") {
		t.Errorf("a second fork into %s: %v", dir, err)
	}

	// A changed prompt file is a change to the prompt's template.
	if err := os.WriteFile(filepath.Join(dir, "prompts", "review.md"), []byte("Review the change carefully.\nReturn JSON: {\"approved\": bool}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e, out, _ = testEnv()
	err = (&diffCmd{A: dir, B: "stdlib:review"}).Run(e)
	if exitOf(err) != exitFailed {
		t.Fatalf("diff after a change: exit %d, want 1", exitOf(err))
	}
	want := `Your changes:
--- stdlib:review as forked (apl dev)
+++ ` + dir + `
~ prompt.review: template
    @@ -1,3 +1,3 @@
     file("prompts/review.md"):
    -Review the change.
    +Review the change carefully.
     Return JSON: {"approved": bool}

Upstream's changes since the fork: none.
`
	if out.String() != want {
		t.Errorf("diff:\n%s\nwant:\n%s", out, want)
	}
}

func TestForkUnknown(t *testing.T) {
	e, _, _ := testEnv()
	err := (&forkCmd{Name: "stdlib:nope", Dir: t.TempDir()}).Run(e)
	if exitOf(err) != exitUsage || err.Error() != `there is no stdlib playbook "nope"; apl stdlib list shows them` {
		t.Errorf("got %v", err)
	}
}

// TestForkDiffUpstreamChanged forks, edits the fork, and diffs it against
// a changed upstream (a directory standing for a newer apl's stdlib): the
// fork's changes and upstream's are apart, and the attribute both changed
// is a conflict.
func TestForkDiffUpstreamChanged(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "fork")
	e, _, errb := testEnv()
	if err := (&forkCmd{Name: "review", Dir: dir}).Run(e); err != nil {
		t.Fatalf("fork: %v\n%s", err, errb)
	}
	edit := func(path, old, new string) {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil || !strings.Contains(string(b), old) {
			t.Fatalf("%s lacks %q (%v)", path, old, err)
		}
		if err := os.WriteFile(path, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Upstream, later: the stdlib's files with two changes.
	up := filepath.Join(tmp, "upstream")
	for name, f := range testStdlib {
		p := filepath.Join(up, filepath.FromSlash(strings.TrimPrefix(name, "review/")))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	edit(filepath.Join(up, "main.hcl"), "max_response_lines = 100", "max_response_lines = 150")
	edit(filepath.Join(up, "main.hcl"), `description = "Review a change."`, `description = "Review a change for bugs."`)
	// The fork: the same budget, changed otherwise, and a new step.
	edit(filepath.Join(dir, "main.hcl"), "max_response_lines = 100", "max_response_lines = 300")
	if f, err := os.OpenFile(filepath.Join(dir, "main.hcl"), os.O_APPEND|os.O_WRONLY, 0); err != nil {
		t.Fatal(err)
	} else {
		f.WriteString("\nstep \"notify\" {\n  shell {\n    command = [\"echo\", \"done\"]\n  }\n}\n")
		f.Close()
	}

	e, out, errb := testEnv()
	err := (&diffCmd{A: dir, B: up}).Run(e)
	if exitOf(err) != exitFailed {
		t.Fatalf("exit %d, want 1: %v\n%s", exitOf(err), err, errb)
	}
	want := `Your changes:
--- stdlib:review as forked (apl dev)
+++ ` + dir + `
+ step.notify
budgets:
   budget  max_response_lines
-  review  100
+  review  300

Upstream's changes since the fork:
--- stdlib:review as forked (apl dev)
+++ ` + up + `
~ playbook: description = "Review a change." → "Review a change for bugs."
budgets:
   budget  max_response_lines
-  review  100
+  review  150

Changed on both sides; merge these by hand:
  budget.review: max_response_lines (yours: changed it; upstream: changed it)
`
	if out.String() != want {
		t.Errorf("diff:\n%s\nwant:\n%s", out, want)
	}
	if errb.Len() > 0 {
		t.Errorf("stderr: %s", errb)
	}

	e, out, _ = testEnv()
	(&diffCmd{A: dir, B: up, JSON: true}).Run(e)
	var got struct {
		Equal bool
		Fork  struct {
			Upstream        string
			Yours           []diff.Change
			UpstreamChanges []diff.Change `json:"upstream_changes"`
			Conflicts       []diff.Conflict
		}
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got.Equal || got.Fork.Upstream != "stdlib:review" || len(got.Fork.Yours) != 2 || len(got.Fork.UpstreamChanges) != 2 ||
		len(got.Fork.Conflicts) != 1 || got.Fork.Conflicts[0].Yours.B != "300" || got.Fork.Conflicts[0].Upstream.B != "150" {
		t.Errorf("--json:\n%s", out)
	}

	// Both sides making the same change is no conflict.
	edit(filepath.Join(up, "main.hcl"), "max_response_lines = 150", "max_response_lines = 300")
	e, out, _ = testEnv()
	(&diffCmd{A: dir, B: up}).Run(e)
	if strings.Contains(out.String(), "merge these by hand") {
		t.Errorf("the same change on both sides is a conflict:\n%s", out)
	}
}
