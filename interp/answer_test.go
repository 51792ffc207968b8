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
	script := filepath.Join(t.TempDir(), "answer")
	if err := os.WriteFile(script, []byte(answer), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Start(context.Background(), pb, "big.hcl", Options{Workdir: work, NoSync: true,
		AgentCommand: []string{"cat", script}})
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
		case strings.HasSuffix(p, ".output.json"):
			var s string
			if err := json.Unmarshal(b, &s); err != nil || s != answer {
				t.Errorf("%s does not hold the answer as JSON (%v)", p, err)
			}
		case strings.HasSuffix(p, ".prompt"):
		default:
			t.Errorf("artifact %s: the answer is kept again", p)
		}
	}
	if len(names) != 3 {
		t.Errorf("artifacts %v, want the prompt, the response and the output", names)
	}
}
