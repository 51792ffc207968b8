package interp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apl-lang/apl/lang"
	"github.com/zclconf/go-cty/cty"
)

// load compiles a playbook from source, failing the test on errors.
func load(t testing.TB, src string) *lang.Playbook {
	t.Helper()
	pb, diags := (&lang.Loader{}).LoadSources(map[string][]byte{"test.hcl": []byte(src)}, ".")
	if diags.HasErrors() {
		t.Fatalf("load: %s", diags.Error())
	}
	return pb
}

// recorder collects events.
type recorder struct {
	mu     sync.Mutex
	events []Event
}

func (r *recorder) Event(e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) steps(kind string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		if e.Type == kind {
			out = append(out, e.Step)
		}
	}
	return out
}

func start(t *testing.T, pb *lang.Playbook, inputs map[string]cty.Value) (*Result, *recorder, string) {
	t.Helper()
	work := t.TempDir()
	rec := &recorder{}
	res, err := Start(context.Background(), pb, "test.hcl", Options{Workdir: work, Inputs: inputs, Observer: rec, NoSync: true})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return res, rec, work
}

func TestScriptQuotesInterpolatedValues(t *testing.T) {
	pb := load(t, `
playbook "q" {}
input "name" { type = string }
input "words" { type = list(string) }
step "echo" {
  shell {
    script = <<-EOT
      printf '[%s]' ${inputs.name} ${inputs.words}
      %{ for w in inputs.words }printf '<%s>' ${w}; %{ endfor }
      %{ if inputs.name != "" }printf '{%s}' ${inputs.name}%{ endif }
    EOT
  }
}
output { out = steps.echo.output }
`)
	hostile := "$(touch pwned) `touch pwned2`; touch pwned3 'x' \"y\""
	res, _, work := start(t, pb, map[string]cty.Value{
		"name":  cty.StringVal(hostile),
		"words": cty.ListVal([]cty.Value{cty.StringVal("a b"), cty.StringVal("$HOME")}),
	})
	if res.Status != StatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.Reason)
	}
	for _, f := range []string{"pwned", "pwned2", "pwned3"} {
		if _, err := os.Stat(filepath.Join(work, f)); err == nil {
			t.Errorf("%s was created: the input was run as a command", f)
		}
	}
	var out struct{ Out string }
	json.Unmarshal(res.OutputJSON, &out)
	want := "[" + hostile + "][a b][$HOME]<a b><$HOME>{" + hostile + "}"
	if out.Out != want {
		t.Errorf("output\n got %q\nwant %q", out.Out, want)
	}
}

func TestWhenSkipsAndRecordsReason(t *testing.T) {
	pb := load(t, `
playbook "w" {}
input "skip" { type = bool }
step "a" {
  when        = "!inputs.skip"
  skip_reason = "skip is ${inputs.skip}"
  shell { command = ["true"] }
}
step "b" { shell { command = ["true"] } }
`)
	res, rec, _ := start(t, pb, map[string]cty.Value{"skip": cty.True})
	if got := rec.steps(EventStepSkipped); len(got) != 1 || got[0] != "a" {
		t.Fatalf("skipped %v, want [a]", got)
	}
	for _, e := range rec.events {
		if e.Type == EventStepSkipped && e.Message != "skip is true" {
			t.Errorf("skip reason %q", e.Message)
		}
	}
	st, _, err := ReadRun(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Steps["a"].Status != StepSkipped || st.Steps["a"].SkipReason != "skip is true" || st.Steps["b"].Status != StepCompleted {
		t.Errorf("records: a=%+v b=%+v", st.Steps["a"], st.Steps["b"])
	}
}

func TestGateLoopRespectsCap(t *testing.T) {
	pb := load(t, `
playbook "loop" {}
step "try" {
  shell { script = "echo x >> tries; wc -l < tries" }
}
step "check" {
  gate {
    rule "again" {
      when = "steps.try.attempts < 10"
      goto = "try"
      max  = 3
      on_exhausted {
        set    = { why = "too many tries" }
        fail   = "halt"
        reason = "gave up after ${steps.try.attempts} tries: ${vars.why}"
      }
    }
    otherwise { finish = "completed" }
  }
}
output {
  tries = steps.try.attempts
  rec   = run.recommendation
}
`)
	res, rec, _ := start(t, pb, nil)
	if res.Status != StatusFailed || res.Recommendation != "halt" {
		t.Fatalf("status %s rec %s", res.Status, res.Recommendation)
	}
	if res.Reason != "gave up after 4 tries: too many tries" {
		t.Errorf("reason %q", res.Reason)
	}
	if got := rec.steps(EventStepStarted); strings.Join(got, ",") != "try,check,try,check,try,check,try,check" {
		t.Errorf("path %v", got)
	}
	if got := string(res.OutputJSON); got != `{"rec":"halt","tries":4}` {
		t.Errorf("output %s", got)
	}
}

func TestFailedStepFailsRunWithLocation(t *testing.T) {
	pb := load(t, `
playbook "f" {}
step "boom" {
  shell { script = "echo oops >&2; exit 3" }
}
step "never" { shell { command = ["true"] } }
`)
	res, rec, _ := start(t, pb, nil)
	if res.Status != StatusFailed {
		t.Fatalf("status %s", res.Status)
	}
	if !strings.Contains(res.Reason, `step "boom" (test.hcl:3,1-12)`) || !strings.Contains(res.Reason, "exit status 3: oops") {
		t.Errorf("reason %q", res.Reason)
	}
	if got := rec.steps(EventStepStarted); len(got) != 1 {
		t.Errorf("ran %v after a failure", got)
	}
}

func TestContinueOnErrorLetsGateRoute(t *testing.T) {
	pb := load(t, `
playbook "c" {}
step "probe" {
  continue_on_error = true
  shell { command = ["false"] }
  gate {
    rule "failed" {
      when   = "steps.probe.status == 'failed' && steps.probe.exit_code == 1"
      finish = "probe_failed"
    }
    otherwise { finish = "completed" }
  }
}
`)
	res, _, _ := start(t, pb, nil)
	if res.Status != "probe_failed" {
		t.Fatalf("status %s (%s)", res.Status, res.Reason)
	}
}

func TestOnFailureSeesTheFailure(t *testing.T) {
	pb := load(t, `
playbook "of" {}
step "work" {
  gate {
    otherwise {
      fail   = "rollback"
      reason = "judge said so"
    }
  }
}
on_failure {
  step "postmortem" {
    shell { script = "printf '%s|%s|%s' ${run.status} ${run.recommendation} ${run.reason} > postmortem.txt" }
  }
}
`)
	res, _, work := start(t, pb, nil)
	if res.Status != StatusFailed || res.Recommendation != "rollback" {
		t.Fatalf("status %s rec %s", res.Status, res.Recommendation)
	}
	b, err := os.ReadFile(filepath.Join(work, "postmortem.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "failed|rollback|judge said so" {
		t.Errorf("postmortem saw %q", b)
	}
}

func TestStateAndTraceWritten(t *testing.T) {
	pb := load(t, `
playbook "s" {}
step "a" { shell { command = ["echo", "hello"] } }
step "b" { shell { script = "echo world" } }
`)
	res, _, work := start(t, pb, nil)
	st, used, err := ReadRun(res.Dir)
	if err != nil || used != stateFile {
		t.Fatalf("read state: %v (%s)", err, used)
	}
	var kinds []string
	for _, e := range st.Events {
		kinds = append(kinds, e.Type)
	}
	want := "run_started,step_started,step_completed,step_started,step_completed,run_completed"
	if strings.Join(kinds, ",") != want {
		t.Errorf("events %v, want %s", kinds, want)
	}
	if st.Meta.Status != StatusCompleted || st.Meta.RunID != res.RunID || st.Meta.PlaybookHash != pb.Hash {
		t.Errorf("meta %+v", st.Meta)
	}
	if string(st.Steps["a"].Output) != `"hello\n"` {
		t.Errorf("output of a: %s", st.Steps["a"].Output)
	}
	trace, err := os.ReadFile(filepath.Join(res.Dir, "trace.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(trace)), "\n")
	if len(lines) != 2 {
		t.Fatalf("trace has %d lines, want 2:\n%s", len(lines), trace)
	}
	var sp Span
	if err := json.Unmarshal([]byte(lines[0]), &sp); err != nil {
		t.Fatal(err)
	}
	if sp.Step != "a" || sp.Action != "command_run" || sp.Status != "success" || sp.InputSummary != "echo hello" {
		t.Errorf("span %+v", sp)
	}
	if b, err := os.ReadFile(filepath.Join(work, ".apl", ".gitignore")); err != nil || !strings.Contains(string(b), "*") {
		t.Errorf(".apl/.gitignore: %q %v", b, err)
	}
	latest, err := ResolveRun(filepath.Join(work, ".apl", "runs"), "")
	if err != nil || filepath.Base(latest) != res.RunID {
		t.Errorf("latest = %s, %v; want %s", latest, err, res.RunID)
	}
}

func TestInputsPrecedenceAndValidation(t *testing.T) {
	pb := load(t, `
playbook "i" {}
input "threshold" {
  type    = number
  default = 9
  validation {
    condition = "value >= 0 && value <= 10"
    message   = "a score out of 10"
  }
}
input "phase" {
  flag = "phase"
}
mode "lenient" { inputs = { threshold = 7 } }
output { t = inputs.threshold }
`)
	cases := []struct {
		mode   string
		given  map[string]cty.Value
		want   string
		errSub string
	}{
		{"", map[string]cty.Value{"phase": cty.StringVal("1")}, `{"t":9}`, ""},
		{"lenient", map[string]cty.Value{"phase": cty.StringVal("1")}, `{"t":7}`, ""},
		{"lenient", map[string]cty.Value{"phase": cty.StringVal("1"), "threshold": cty.NumberIntVal(8)}, `{"t":8}`, ""},
		{"", nil, "", "missing required input \"phase\""},
		{"", map[string]cty.Value{"phase": cty.StringVal("1"), "threshold": cty.NumberIntVal(11)}, "", "invalid value for input \"threshold\": a score out of 10"},
		{"strict", map[string]cty.Value{"phase": cty.StringVal("1")}, "", `unknown mode "strict"; playbook "i" has modes: lenient`},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.mode, c.given), func(t *testing.T) {
			res, err := Start(context.Background(), pb, "i", Options{Workdir: t.TempDir(), Mode: c.mode, Inputs: c.given, NoSync: true})
			if c.errSub != "" {
				if err == nil || !strings.Contains(err.Error(), c.errSub) {
					t.Fatalf("err %v, want %q", err, c.errSub)
				}
				if _, ok := err.(*InputError); !ok {
					t.Errorf("err is %T, want *InputError", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(res.OutputJSON) != c.want {
				t.Errorf("output %s, want %s", res.OutputJSON, c.want)
			}
		})
	}
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}

// Issue 9: a value interpolated inside double quotes, single quotes, an
// unquoted heredoc or an assignment's quotes was quoted for a bare word,
// so an agent answering {"title": "$(touch PWNED)"} ran the command. Each
// value is now quoted for where it lands.
func TestScriptQuotesByContext(t *testing.T) {
	pb := load(t, `
playbook "q" {}
agent "a" {
  type = "general-purpose"
}
prompt "p" { template = "title?" }
step "ask" {
  agent "a" { prompt = prompt.p }
  returns = object({ title = string })
}
step "echo" {
  shell {
    script = <<-EOT
      echo "Title: ${steps.ask.output.title}"
      echo '${steps.ask.output.title}'
      X="${steps.ask.output.title}"; echo "$X"
      cat <<EOF
      ${steps.ask.output.title}
      EOF
    EOT
  }
}
output { out = steps.echo.output }
`)
	work := t.TempDir()
	hostile := "$(touch PWNED) `touch PWNED2` \"'; touch PWNED3; '"
	answer, _ := json.Marshal(map[string]string{"title": hostile})
	res, err := Start(context.Background(), pb, "test.hcl", Options{Workdir: work, NoSync: true,
		AgentCommand: []string{"sh", "-c", "cat >/dev/null; printf '%s' '" + strings.ReplaceAll(string(answer), "'", `'\''`) + "'"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.Reason)
	}
	for _, f := range []string{"PWNED", "PWNED2", "PWNED3"} {
		if _, err := os.Stat(filepath.Join(work, f)); err == nil {
			t.Errorf("the agent's answer ran a command: %s exists", f)
		}
	}
	var out struct{ Out string }
	if err := json.Unmarshal(res.OutputJSON, &out); err != nil {
		t.Fatal(err)
	}
	want := "Title: " + hostile + "\n" + hostile + "\n" + hostile + "\n" + hostile + "\n"
	if out.Out != want {
		t.Errorf("bash printed\n%q\nwant\n%q", out.Out, want)
	}
}

// run.dir is the run's own directory, so a step can leave files there
// that belong to this run only.
func TestRunDirIsTheRunDirectory(t *testing.T) {
	pb := load(t, `
playbook "d" {}
step "note" {
  shell {
    script = "echo hello > ${run.dir}/note.txt && echo ${run.dir}"
  }
}
output { dir = trimspace(steps.note.output) }
`)
	res, _, _ := start(t, pb, nil)
	if res.Status != StatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.Reason)
	}
	want, _ := filepath.Abs(res.Dir)
	if got := res.Output.GetAttr("dir").AsString(); got != want {
		t.Errorf("run.dir = %q, want %q", got, want)
	}
	if b, err := os.ReadFile(filepath.Join(res.Dir, "note.txt")); err != nil || string(b) != "hello\n" {
		t.Errorf("note.txt: %q, %v", b, err)
	}
}

// A declared var starts at its default, conditions read it typed, and a
// set converts to its type: "3" set to a number var is the number 3.
func TestDeclaredVarStartsAtDefault(t *testing.T) {
	pb := load(t, `
playbook "v" {}
var "attempts" {
  type    = number
  default = 0
}
var "notes" {
  type = list(string)
}
step "try" {
  shell {
    command = ["echo", "try ${vars.attempts}"]
  }
  gate {
    rule "again" {
      when = "vars.attempts < 2"
      set  = { attempts = "${vars.attempts + 1}", notes = concat(coalesce(vars.notes, []), ["n${vars.attempts}"]) }
      goto = "try"
      max  = 5
      on_exhausted {
        fail = "halt"
      }
    }
    otherwise {}
  }
}
output {
  attempts = vars.attempts
  notes    = vars.notes
}
`)
	res, _, _ := start(t, pb, nil)
	if res.Status != StatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.Reason)
	}
	if got := string(res.OutputJSON); got != `{"attempts":2,"notes":["n0","n1"]}` {
		t.Errorf("output %s", got)
	}
}
