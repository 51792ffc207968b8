package lang

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
)

// writeTree writes files (paths relative to dir) and returns dir.
func writeTree(t testing.TB, dir string, files map[string]string) string {
	t.Helper()
	for name, src := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const extendsBase = `playbook "base" {
  description = "the upstream"
}

locals {
  greeting = "hello"
  level    = 1
}

prompt "review" {
  template = file("prompts/review.md")
}

step "research" {
  shell {
    command = ["/bin/true"]
  }
}

step "build" {
  timeout = "10m"
  shell {
    command = ["make", "build"]
  }
  retry {
    max = 2
  }
}

step "verify" {
  timeout = "5m"
  returns = object({ score = number })
  shell {
    command = ["echo", "{\"score\": 7}"]
    parse   = "json"
  }
  gate {
    rule "halt" {
      when = "steps.verify.output.score < 0"
      fail = "halt"
    }
    rule "pass" {
      when = "steps.verify.output.score >= 9"
    }
    otherwise {
      fail = "too low"
    }
  }
}
`

func loadFork(t *testing.T, fork map[string]string) (*Playbook, string) {
	t.Helper()
	root := markRepo(t, t.TempDir())
	writeTree(t, filepath.Join(root, "base"), map[string]string{
		"main.hcl":          extendsBase,
		"prompts/review.md": "Review ${local.greeting}.\n",
	})
	dir := writeTree(t, filepath.Join(root, "fork"), fork)
	pb, diags := Load(dir)
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			t.Fatalf("fork does not load: %s", d)
		}
	}
	return pb, root
}

func TestExtendsOverrides(t *testing.T) {
	pb, root := loadFork(t, map[string]string{
		"fork.hcl": `extends = "../base"

playbook "lenient" {}

locals {
  level = 2
}

step "research" {
  removed = true
}

step "verify" {
  timeout = "20m"
  gate {
    rule "pass" {
      when = "steps.verify.output.score >= 7"
    }
    rule "close" {
      when = "steps.verify.output.score >= 5"
      log  = "close enough"
    }
  }
}

step "build" {
  retry {
    max = 5
  }
}

step "report" {
  shell {
    command = ["echo", "done"]
  }
}
`,
	})
	if pb.Name != "lenient" || pb.Description != "the upstream" {
		t.Errorf("playbook %q %q, want lenient with the upstream's description", pb.Name, pb.Description)
	}
	var steps []string
	for _, s := range pb.Steps {
		steps = append(steps, s.Name)
	}
	if diff := cmp.Diff([]string{"build", "verify", "report"}, steps); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	verify := pb.Step("verify")
	if verify.Timeout.String() != "20m0s" {
		t.Errorf("verify timeout %s, want the fork's 20m", verify.Timeout)
	}
	var rules []string
	for _, r := range verify.Gate.Rules {
		rules = append(rules, r.Name)
	}
	if diff := cmp.Diff([]string{"halt", "pass", "close"}, rules); diff != "" {
		t.Errorf("rules keep the upstream's order, new ones last (-want +got):\n%s", diff)
	}
	if f := verify.Gate.Rules[1].When.Range.Filename; !strings.Contains(f, "fork") {
		t.Errorf("rule pass's condition comes from %s, want the fork", f)
	}
	if f := verify.Gate.Rules[0].When.Range.Filename; strings.Contains(f, "fork") {
		t.Errorf("rule halt's condition comes from %s, want the upstream", f)
	}
	if build := pb.Step("build"); build.Retry == nil || build.Retry.Max != 5 || build.Timeout.String() != "10m0s" {
		t.Errorf("build: nested retry block overridden, timeout kept: %+v", build)
	}
	if len(pb.Removed) != 1 || pb.Removed[0].Block != "step.research" {
		t.Errorf("removed %+v, want step.research", pb.Removed)
	}
	if len(pb.Extends) != 1 || pb.Extends[0] != filepath.Join(root, "fork", "../base") {
		t.Errorf("extends %v", pb.Extends)
	}
	levels := map[string]string{}
	for _, l := range pb.Locals {
		levels[l.Name] = l.Expr.Range().Filename
	}
	if !strings.Contains(levels["level"], "fork") || strings.Contains(levels["greeting"], "fork") {
		t.Errorf("locals from %v: level should be the fork's, greeting the upstream's", levels)
	}
	// The upstream's prompt file is read relative to the upstream.
	if pb.Prompts["review"] == nil || pb.Prompts["review"].Template == nil {
		t.Fatal("the upstream's file() prompt did not load")
	}

	origins, removal, err := pb.Explain("step.verify.timeout")
	if err != nil || removal != nil || len(origins) != 1 {
		t.Fatalf("Explain: %v %v %v", origins, removal, err)
	}
	o := origins[0]
	if o.Winner.Text != `timeout = "20m"` || !strings.HasSuffix(o.Winner.Range.Filename, "fork.hcl") || o.Winner.Range.Start.Line != 14 {
		t.Errorf("winner %+v", o.Winner)
	}
	if len(o.Overrode) != 1 || o.Overrode[0].Text != `timeout = "5m"` || !strings.HasSuffix(o.Overrode[0].Range.Filename, "main.hcl") {
		t.Errorf("overrode %+v", o.Overrode)
	}
	if _, r, _ := pb.Explain("step.research.shell"); r == nil {
		t.Errorf("Explain of a removed block: no removal")
	}
	if _, _, err := pb.Explain("step.verfy"); err == nil || !strings.Contains(err.Error(), "did you mean step.verify") {
		t.Errorf("Explain of a typo: %v", err)
	}
	all, _, _ := pb.Explain("step.verify")
	if len(all) < 6 {
		t.Errorf("Explain of a block lists its attributes and its blocks': %+v", all)
	}
}

// TestExtendsPromptFileResolvesInFork checks that file() in the fork reads
// from the fork's directory.
func TestExtendsPromptFileResolvesInFork(t *testing.T) {
	pb, _ := loadFork(t, map[string]string{
		"fork.hcl": `extends = "../base"

prompt "review" {
  template = file("review.md")
}
`,
		"review.md": "Look again at ${local.greeting}.\n",
	})
	name := pb.Prompts["review"].Template.Range().Filename
	if !strings.HasSuffix(name, filepath.Join("fork", "review.md")) {
		t.Errorf("prompt read from %s, want the fork's review.md", name)
	}
}

// TestExtendsHashCoversUpstream checks that a change upstream changes the
// fork's hash, which is what resume compares.
func TestExtendsHashCoversUpstream(t *testing.T) {
	pb, root := loadFork(t, map[string]string{"fork.hcl": `extends = "../base"` + "\n"})
	before := pb.Hash
	writeTree(t, filepath.Join(root, "base"), map[string]string{"prompts/review.md": "Review ${local.greeting} twice.\n"})
	after, _ := Load(filepath.Join(root, "fork"))
	if after.Hash == before {
		t.Error("changing the upstream's prompt file left the fork's hash unchanged")
	}
	plain, _ := Load(filepath.Join(root, "base"))
	if plain.Hash == after.Hash {
		t.Error("the fork and its upstream hash the same")
	}
}

// TestExtendsStdlib extends a stdlib playbook through the Loader's Stdlib.
func TestExtendsStdlib(t *testing.T) {
	lib := os.DirFS("testdata/errors")
	ld := &Loader{Stdlib: lib}
	pb, diags := ld.LoadSources(map[string][]byte{"fork.hcl": []byte(`extends = "stdlib:extends_base"

step "build" {
  timeout = "1m"
}
`)}, t.TempDir())
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if pb.Step("build").Timeout.String() != "1m0s" || pb.Step("research") == nil {
		t.Errorf("steps %v", pb.Steps)
	}
	if _, ok := pb.Sources["stdlib:extends_base/main.hcl"]; !ok {
		t.Errorf("sources %v lack the upstream's", pb.Sources)
	}
}
