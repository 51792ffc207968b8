package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/apl-lang/apl/lang"
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
	want := `--- ` + dir + `
+++ stdlib:review
~ prompt "review": template
    @@ -1,3 +1,3 @@
     file("prompts/review.md"):
    -Review the change carefully.
    +Review the change.
     Return JSON: {"approved": bool}
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
