package interp

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
	"github.com/zclconf/go-cty/cty"
)

const dryPlaybook = `
playbook "dry" {}

state {
  path = ".autopilot/state.json"
}

agent "worker" {
  type = "worker"
}

step "read" {
  call "file.read" {
    path = "input.txt"
  }
}

step "work" {
  returns = object({ score = number, notes = list(string), done = bool })
  agent "worker" {
    prompt = "Work on ${steps.read.output.content}."
  }
}

step "check" {
  returns = object({ score = number })
  example = { score = 9.5 }
  shell {
    script = "echo written > shell.txt; echo '{\"score\": 1}'"
    parse  = "json"
  }
  gate {
    rule "pass" {
      when = "steps.check.output.score >= 9"
      goto = "write"
    }
    otherwise {
      fail = "halt"
    }
  }
}

step "write" {
  call "file.write" {
    path    = "out.txt"
    content = "done"
  }
}

output {
  content = steps.read.output.content
  score   = steps.work.output.score
  notes   = steps.work.output.notes
  checked = steps.check.output.score
  wrote   = steps.write.output.path
}
`

// TestDryRun checks that a dry run answers agents, commands and writing
// builtins with examples, runs the reads, and leaves the project as it
// was: no file written, no .apl or state directory.
func TestDryRun(t *testing.T) {
	pb, diags := (&lang.Loader{Builtins: builtins.Funcs().Names()}).LoadSources(map[string][]byte{"dry.hcl": []byte(dryPlaybook)}, ".")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "input.txt"), []byte("the input"), 0o644); err != nil {
		t.Fatal(err)
	}
	var prompts []string
	rec := &recorder{}
	res, err := Start(context.Background(), pb, "dry.hcl", Options{Workdir: work, Observer: rec, NoSync: true,
		DryRun: &DryRun{Prompt: func(step, item, prompt string) { prompts = append(prompts, step+": "+prompt) }}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusCompleted || res.Dir != "" {
		t.Fatalf("status %s (%s), dir %q", res.Status, res.Reason, res.Dir)
	}
	if diff := cmp.Diff([]string{"read", "work", "check", "write"}, rec.steps(EventStepStarted)); diff != "" {
		t.Errorf("path (-want +got):\n%s", diff)
	}
	want := `{"checked":9.5,"content":"the input","notes":["example"],"score":0,"wrote":"out.txt"}`
	if got := string(res.OutputJSON); got != want {
		t.Errorf("output %s, want %s", got, want)
	}
	if diff := cmp.Diff([]string{"work: Work on the input."}, prompts); diff != "" {
		t.Errorf("prompts (-want +got):\n%s", diff)
	}
	entries, _ := os.ReadDir(work)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{"input.txt"}, names); diff != "" {
		t.Errorf("project files (-want +got):\n%s", diff)
	}
}

// TestDryRunWrap checks that stand-ins a caller wraps around the dry
// run's actions answer first and hand the other steps on.
func TestDryRunWrap(t *testing.T) {
	pb, diags := (&lang.Loader{Builtins: builtins.Funcs().Names()}).LoadSources(map[string][]byte{"dry.hcl": []byte(dryPlaybook)}, ".")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	work := t.TempDir()
	wrap := func(a Actions) Actions {
		inner := a.Shell
		a.Shell = shellFunc(func(ctx context.Context, spec builtins.ShellSpec) (builtins.ShellResult, error) {
			if spec.Step == "check" {
				return builtins.ShellResult{Stdout: `{"score": 2}`, Output: cty.ObjectVal(map[string]cty.Value{"score": cty.NumberIntVal(2)})}, nil
			}
			return inner.Run(ctx, spec)
		})
		drivers := a.Drivers
		a.Drivers = func(ag *lang.Agent) (agent.Driver, error) { return drivers(ag) }
		return a
	}
	res, err := Start(context.Background(), pb, "dry.hcl", Options{Workdir: work, NoSync: true, DryRun: &DryRun{Wrap: wrap}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusFailed || res.Recommendation != "halt" {
		t.Errorf("status %s, recommendation %q; want failed, halt", res.Status, res.Recommendation)
	}
	if !strings.Contains(string(res.OutputJSON), `"content":""`) {
		t.Errorf("output %s: file.read of a missing file should run and find nothing", res.OutputJSON)
	}
}

func TestExample(t *testing.T) {
	ty := cty.Object(map[string]cty.Type{
		"s": cty.String, "n": cty.Number, "b": cty.Bool, "l": cty.List(cty.Object(map[string]cty.Type{"x": cty.Bool})),
		"m": cty.Map(cty.Number), "d": cty.DynamicPseudoType,
	})
	got, err := builtins.CtyToJSON(Example(ty))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"b":true,"d":"example","l":[{"x":true}],"m":{"example":0},"n":0,"s":"example"}`
	if string(got) != want {
		t.Errorf("Example = %s, want %s", got, want)
	}
}
