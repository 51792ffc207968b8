package interp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A large text answer is written to disk once as it arrives (the
// response artifact, which steps.NAME.raw then reads) and once as the
// step's output, not a third time as a copy of the text.
func TestLargeAnswerWrittenOnce(t *testing.T) {
	pb := load(t, `
playbook "big" {}
agent "a" { type = "general-purpose" }
prompt "p" { template = "go" }
step "ask" {
  agent "a" { prompt = prompt.p }
}
output {
  out = steps.ask.output
  raw = steps.ask.raw
}
`)
	work := t.TempDir()
	answer := strings.Repeat("a line of the answer \"quoted\"\n", 20000) // 600 KB
	res, err := Start(context.Background(), pb, "big.hcl", answering(t, work, answer))
	if err != nil || res.Status != StatusCompleted {
		t.Fatal(err, res)
	}
	want := len(answer)
	var out struct{ Out, Raw string }
	if err := json.Unmarshal(res.OutputJSON, &out); err != nil || out.Out != answer || out.Raw != answer {
		t.Errorf("output: %v; want the answer as output and raw", err)
	}
	arts, err := filepath.Glob(filepath.Join(work, ".apl", "runs", res.RunID, "artifacts", "*"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range arts {
		names = append(names, filepath.Base(p))
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case strings.HasSuffix(p, ".response"):
			if string(b) != answer {
				t.Errorf("%s holds %d bytes, want the answer's %d", p, len(b), want)
			}
		case strings.HasSuffix(p, ".prompt"):
		default:
			// The output is the answer as it came: the state names the
			// response for it instead of a JSON copy (.output.json).
			t.Errorf("artifact %s: the answer is kept again", p)
		}
	}
	if len(names) != 2 {
		t.Errorf("artifacts %v, want the prompt and the response", names)
	}
}

// A resumed run reads a large text output back from the response
// artifact its record names (output_text), as the value the step gave.
func TestLargeAnswerResumedFromItsArtifact(t *testing.T) {
	pb := load(t, `
playbook "big" {}
agent "a" { type = "general-purpose" }
prompt "p" { template = "go" }
step "ask" {
  agent "a" { prompt = prompt.p }
}
step "then" {
  shell { script = "test -f go-on" }
}
output {
  out = steps.ask.output
  raw = steps.ask.raw
}
`)
	work := t.TempDir()
	answer := strings.Repeat("a line \"quoted\" <b>&amp; ünïcode \u2028 \\ tab\t\n", 12000) // 600 KB
	opts := answering(t, work, answer)
	res, err := Start(context.Background(), pb, "big.hcl", opts)
	if err != nil || res.Status != StatusFailed {
		t.Fatal(err, res)
	}
	st, _, err := ReadRun(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if rec := st.Steps["ask"]; rec.OutputText == "" || rec.OutputText != rec.RawFile || rec.OutputFile != "" || rec.Output != nil {
		t.Fatalf("record %+v: want the output named by output_text, the response", rec)
	}
	if err := os.WriteFile(filepath.Join(work, "go-on"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = Resume(context.Background(), pb, res.Dir, Options{NoSync: true})
	if err != nil || res.Status != StatusCompleted {
		t.Fatal(err, res)
	}
	var out struct{ Out, Raw string }
	if err := json.Unmarshal(res.OutputJSON, &out); err != nil || out.Out != answer || out.Raw != answer {
		t.Errorf("output after resume: %v; want the answer as output and raw (%d and %d bytes of %d)", err, len(out.Out), len(out.Raw), len(answer))
	}
}

// answering is the options of a run in work whose agent answers answer,
// written to a file that cat prints.
func answering(t *testing.T, work, answer string) Options {
	t.Helper()
	file := filepath.Join(t.TempDir(), "answer")
	if err := os.WriteFile(file, []byte(answer), 0o644); err != nil {
		t.Fatal(err)
	}
	return Options{Workdir: work, NoSync: true, AgentCommand: []string{"cat", file}}
}

// TestWaitingQuestionKeepsItsDefault: a run waiting on a question with a
// default says the default, in its result and its state, so that a
// client that asks the question later (apl run --engine temporal at a
// terminal) offers it as a local run does.
func TestWaitingQuestionKeepsItsDefault(t *testing.T) {
	pb := load(t, `
playbook "p" {}
step "confirm" {
  ask {
    question = "Publish?"
    options  = ["yes", "no"]
    default  = "no"
  }
}
`)
	res, _ := startWith(t, pb, Options{Workdir: t.TempDir()})
	if res.Status != StatusWaiting || res.Waiting == nil || res.Waiting.Default != "no" {
		t.Fatalf("status %s, waiting %+v; want waiting with default no", res.Status, res.Waiting)
	}
	st, _, err := ReadRun(res.Dir)
	if err != nil || st.Waiting == nil || st.Waiting.Default != "no" {
		t.Fatalf("state's waiting %+v (%v); want default no", st.Waiting, err)
	}
}
