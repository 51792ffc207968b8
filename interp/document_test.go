package interp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apl-lang/apl/lang"
	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"
)

// readJSON reads a JSON file into a generic value, failing the test if
// it cannot.
func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, b)
	}
	return m
}

// dig reads a path of object fields out of a decoded JSON value.
func dig(v any, path ...string) any {
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	return v
}

const autopilotDocument = `
playbook "doc" {}

input "phase" {
  type    = string
  default = "6.3"
}

document "autopilot" {
  path    = ".autopilot/state.json"
  backup  = ".autopilot/state.json.backup"
  archive = ".autopilot/archive/run-${run.id}.json"
  content = {
    _meta = {
      version       = "1.0"
      run_id        = run.id
      status        = run.status
      current_phase = inputs.phase
    }
    phases = {
      research = { status = steps.research.status, output = try(trimspace(steps.research.output), null) }
      copy     = { status = steps.copy.status }
      plan     = { status = steps.plan.status }
    }
  }
}

step "research" {
  shell { script = "echo found" }
}

step "copy" {
  shell {
    script = "cp .autopilot/state.json mid.json && cp .autopilot/state.json.backup mid-backup.json"
  }
}

step "plan" {
  shell { script = "echo planned" }
}
`

// The document is written at every transition: a step reading it sees
// itself running, the backup holds the version before that, and on
// completion the document moves to its archive.
func TestDocumentWrittenAtEachTransition(t *testing.T) {
	pb := load(t, autopilotDocument)
	res, _, work := start(t, pb, nil)
	if res.Status != StatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.Reason)
	}
	mid := readJSON(t, filepath.Join(work, "mid.json"))
	if got := dig(mid, "phases", "copy", "status"); got != "running" {
		t.Errorf("mid-run document: copy is %v, want running", got)
	}
	if got := dig(mid, "phases", "research", "output"); got != "found" {
		t.Errorf("mid-run document: research output %v, want found", got)
	}
	if got := dig(mid, "_meta", "current_phase"); got != "6.3" {
		t.Errorf("mid-run document: current_phase %v", got)
	}
	backup := readJSON(t, filepath.Join(work, "mid-backup.json"))
	if got := dig(backup, "phases", "copy", "status"); got != "pending" {
		t.Errorf("backup during copy: copy is %v, want pending (the version before)", got)
	}
	if _, err := os.Stat(filepath.Join(work, ".autopilot", "state.json")); !os.IsNotExist(err) {
		t.Errorf("the document stayed after completion: %v", err)
	}
	archived := readJSON(t, filepath.Join(work, ".autopilot", "archive", "run-"+res.RunID+".json"))
	if got := dig(archived, "_meta", "status"); got != "completed" {
		t.Errorf("archived status %v, want completed", got)
	}
	if got := dig(archived, "phases", "plan", "status"); got != "completed" {
		t.Errorf("archived plan status %v", got)
	}
	// apl's own state is where it always was.
	if _, _, err := ReadRun(res.Dir); err != nil {
		t.Errorf("apl's state: %v", err)
	}
}

// An archived document stays archived: the snapshot written after the
// archiving (for its events) must not write the document again, even when
// its content has changed since (here a timestamp on a clock that moves
// one second per reading; under load, the wall clock does the same).
func TestDocumentArchivedOnce(t *testing.T) {
	pb := load(t, `
playbook "doc" {}
document "d" {
  path    = "d.json"
  archive = "archive/d.json"
  content = { status = run.status, at = timestamp() }
}
step "one" {
  shell { script = "true" }
}
`)
	work := t.TempDir()
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { now = now.Add(time.Second); return now }
	res, err := Start(context.Background(), pb, "test.hcl", Options{Workdir: work, NoSync: true, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.Reason)
	}
	if _, err := os.Stat(filepath.Join(work, "d.json")); !os.IsNotExist(err) {
		t.Errorf("the document was written again after its archiving: %v", err)
	}
	if got := readJSON(t, filepath.Join(work, "archive", "d.json"))["status"]; got != "completed" {
		t.Errorf("archived status %v, want completed", got)
	}
}

// A failed run leaves its document in place, for inspection and resume.
func TestDocumentNotArchivedWhenRunFails(t *testing.T) {
	pb := load(t, `
playbook "doc" {}
document "d" {
  path    = "d.json"
  archive = "archive/d.json"
  content = { status = run.status }
}
step "boom" {
  shell { script = "exit 3" }
}
`)
	res, _, work := start(t, pb, nil)
	if res.Status != StatusFailed {
		t.Fatalf("status %s", res.Status)
	}
	if got := readJSON(t, filepath.Join(work, "d.json"))["status"]; got != "failed" {
		t.Errorf("document status %v, want failed", got)
	}
	if _, err := os.Stat(filepath.Join(work, "archive")); !os.IsNotExist(err) {
		t.Errorf("a failed run's document was archived")
	}
}

// A path template is evaluated once, at run start: uuid() names one file
// for the whole run, which the state remembers.
func TestDocumentPathWithUUID(t *testing.T) {
	pb := load(t, `
playbook "risk" {}
document "pipeline" {
  path    = ".droid/pipeline_state_${uuid()}.json"
  content = { run_id = run.id, stage = steps.two.status }
}
step "one" {
  shell { script = "true" }
}
step "two" {
  shell { script = "true" }
}
`)
	res, _, work := start(t, pb, nil)
	matches, _ := filepath.Glob(filepath.Join(work, ".droid", "pipeline_state_*.json"))
	if len(matches) != 1 {
		t.Fatalf("documents %v, want one", matches)
	}
	uuid := regexp.MustCompile(`pipeline_state_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\.json$`)
	if !uuid.MatchString(matches[0]) {
		t.Errorf("document name %s has no uuid", filepath.Base(matches[0]))
	}
	if got := readJSON(t, matches[0])["stage"]; got != "completed" {
		t.Errorf("stage %v", got)
	}
	st, _, _ := ReadRun(res.Dir)
	rel, _ := filepath.Rel(work, matches[0])
	if got := st.Meta.Documents["pipeline"]; got.Path != rel || got.Backup != rel+".bak" {
		t.Errorf("state remembers %+v, want %s", got, rel)
	}
}

// A path that leads outside the project is refused when the run starts,
// before anything runs.
func TestDocumentPathOutsideProjectRefused(t *testing.T) {
	pb := load(t, `
playbook "esc" {}
input "dir" {
  type = string
}
document "d" {
  path    = "${inputs.dir}/state.json"
  content = { status = run.status }
}
step "s" {
  shell { script = "touch ran" }
}
`)
	work := t.TempDir()
	_, err := Start(context.Background(), pb, "esc", Options{Workdir: work, NoSync: true,
		Inputs: map[string]cty.Value{"dir": cty.StringVal("../elsewhere")}})
	if err == nil || !strings.Contains(err.Error(), "outside the working directory") || !strings.Contains(err.Error(), `document "d"`) {
		t.Fatalf("err %v, want a refusal naming the document", err)
	}
	if _, err := os.Stat(filepath.Join(work, "ran")); err == nil {
		t.Error("the run started anyway")
	}
}

// A projection that fails to evaluate does not fail the run: the last
// good document stays, and the failure is reported once, located.
func TestDocumentFailedProjectionKeepsLastGood(t *testing.T) {
	pb := load(t, `
playbook "bad" {}
document "d" {
  path    = "d.json"
  content = { n = steps.b.status == "completed" ? tonumber(trimspace(steps.b.output)) : 1 }
}
step "a" {
  shell { script = "true" }
}
step "b" {
  shell { script = "echo not-a-number" }
}
step "c" {
  shell { script = "true" }
}
`)
	res, rec, work := start(t, pb, nil)
	if res.Status != StatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.Reason)
	}
	if got := readJSON(t, filepath.Join(work, "d.json"))["n"]; got != 1.0 {
		t.Errorf("document n = %v, want the last good 1", got)
	}
	var failed []Event
	for _, e := range rec.events {
		if e.Type == EventDocumentFailed {
			failed = append(failed, e)
		}
	}
	if len(failed) != 1 {
		t.Fatalf("%d document_failed events, want 1: %+v", len(failed), failed)
	}
	if !strings.Contains(failed[0].Message, "test.hcl:5,") || failed[0].Details["document"] != "d" {
		t.Errorf("event %+v does not say where", failed[0])
	}
}

// A dry run writes no document.
func TestDocumentNotWrittenByDryRun(t *testing.T) {
	pb := load(t, autopilotDocument)
	work := t.TempDir()
	if _, err := Start(context.Background(), pb, "dry", Options{Workdir: work, NoSync: true, DryRun: &DryRun{}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(work, ".autopilot")); !os.IsNotExist(err) {
		t.Errorf("a dry run wrote the document: %v", err)
	}
}

// A document sees a running for_each step's items as they settle: the
// conductor's task table.
func TestDocumentShowsItemsAsTheySettle(t *testing.T) {
	pb := load(t, `
playbook "conductor" {}
document "tasks" {
  path = "tasks.json"
  content = {
    tasks = try({ for k, it in steps.work.output.items : k => it.status }, {})
  }
}
step "work" {
  for_each    = "['t1', 't2']"
  key         = "item"
  concurrency = 1
  step "do" {
    shell { script = "cp tasks.json seen-${item}.json" }
  }
}
`)
	_, _, work := start(t, pb, nil)
	seen := readJSON(t, filepath.Join(work, "seen-t2.json"))
	want := map[string]any{"t1": "completed", "t2": "running"}
	if diff := cmp.Diff(want, seen["tasks"]); diff != "" {
		t.Errorf("tasks while t2 runs (-want +got):\n%s", diff)
	}
	final := readJSON(t, filepath.Join(work, "tasks.json"))
	if diff := cmp.Diff(map[string]any{"t1": "completed", "t2": "completed"}, final["tasks"]); diff != "" {
		t.Errorf("final tasks (-want +got):\n%s", diff)
	}
}

// A run that waits for an answer inside a for_each keeps its task table
// in the document: the items that completed, and the one that asks.
func TestDocumentShowsItemsWhileWaiting(t *testing.T) {
	pb := load(t, `
playbook "conductor" {}
document "tasks" {
  path = "tasks.json"
  content = {
    status = run.status
    tasks  = try({ for k, it in steps.work.output.items : k => it.status }, {})
    # A local the document reads sees the table as the document does.
    done = local.done
  }
}
locals {
  done = try([for k, it in steps.work.output.items : k if it.status == "completed"], [])
}
step "work" {
  for_each = "['t1', 't2']"
  key      = "item"
  step "decide" {
    when = "item == 't2'"
    ask {
      question = "Go on?"
      options  = ["yes", "no"]
    }
  }
}
`)
	res, _, work := start(t, pb, nil)
	if res.Status != StatusWaiting {
		t.Fatalf("status %q, want waiting", res.Status)
	}
	doc := readJSON(t, filepath.Join(work, "tasks.json"))
	want := map[string]any{"status": "waiting", "tasks": map[string]any{"t1": "completed", "t2": "pending"}, "done": []any{"t1"}}
	if diff := cmp.Diff(want, doc); diff != "" {
		t.Errorf("document of the waiting run (-want +got):\n%s", diff)
	}
}

// docChainPlaybook is chainPlaybook(6) with a document of every step's
// status.
func docChainPlaybook() string {
	var b strings.Builder
	b.WriteString(chainPlaybook(6))
	b.WriteString("document \"progress\" {\n  path = \"progress.json\"\n  content = {\n    status = run.status\n    steps = {\n")
	for i := 1; i <= 6; i++ {
		fmt.Fprintf(&b, "      s%02d = { status = steps.s%02d.status }\n", i, i)
	}
	b.WriteString("    }\n  }\n}\n")
	return b.String()
}

// Resume after a kill writes the document again from apl's state: a
// document deleted while the run was down comes back whole, with the
// steps that completed before the kill.
func TestDocumentRewrittenOnResumeAfterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	pb := load(t, docChainPlaybook())
	work := killAndResumeWith(t, pb, 100*time.Millisecond, func(work string) {
		doc := readJSON(t, filepath.Join(work, "progress.json"))
		if doc["status"] != "running" {
			t.Errorf("document after the kill says %v", doc["status"])
		}
		os.Remove(filepath.Join(work, "progress.json"))
	}, "APL_TEST_DOCUMENT=1")
	doc := readJSON(t, filepath.Join(work, "progress.json"))
	if doc["status"] != "completed" {
		t.Errorf("document after resume says %v", doc["status"])
	}
	for i := 1; i <= 6; i++ {
		name := fmt.Sprintf("s%02d", i)
		if got := dig(doc, "steps", name, "status"); got != "completed" {
			t.Errorf("%s: %v", name, got)
		}
	}
}

// Every span carries the playbook's trace attributes, and a gate event
// carries its details.
func TestTraceAttributesAndEventDetails(t *testing.T) {
	pb := load(t, `
playbook "obs" {}
input "phase" {
  type    = string
  default = "6.3"
}
trace {
  attributes = { phase_id = inputs.phase, pipeline = "autopilot" }
}
step "work" {
  for_each = "['t1', 't2']"
  key      = "item"
  step "commit" {
    returns = object({ sha = string })
    shell {
      command = ["echo", "{\"sha\": \"abc-${item}\"}"]
      parse   = "json"
    }
    gate {
      rule "done" {
        when    = "steps.commit.output.sha != ''"
        event   = "task_completed"
        details = { task = item, commit = steps.commit.output.sha, phase = inputs.phase }
      }
      otherwise {}
    }
  }
}
`)
	res, _, _ := start(t, pb, nil)
	st, _, err := ReadRun(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	for _, e := range st.Events {
		if e.Type == "task_completed" {
			got = append(got, e.Details)
		}
	}
	slices.SortFunc(got, func(a, b map[string]any) int { return strings.Compare(a["task"].(string), b["task"].(string)) })
	want := []map[string]any{
		{"task": "t1", "commit": "abc-t1", "phase": "6.3", "rule": "done"},
		{"task": "t2", "commit": "abc-t2", "phase": "6.3", "rule": "done"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("task_completed details (-want +got):\n%s", diff)
	}
	trace, err := os.ReadFile(filepath.Join(res.Dir, "trace.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(trace)), "\n")
	if len(lines) < 4 {
		t.Fatalf("trace has %d lines:\n%s", len(lines), trace)
	}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		if m["phase_id"] != "6.3" || m["pipeline"] != "autopilot" || m["step"] != "commit" {
			t.Errorf("span without the attributes: %s", l)
		}
	}
}

// lang.SpanFields, which trace attributes may not take, are the fields
// of Span.
func TestSpanFieldsMatchLang(t *testing.T) {
	var got []string
	typ := reflect.TypeFor[Span]()
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		got = append(got, name)
	}
	if diff := cmp.Diff(slices.Sorted(slices.Values(lang.SpanFields)), slices.Sorted(slices.Values(got))); diff != "" {
		t.Errorf("Span's fields differ from lang.SpanFields (-lang +interp):\n%s", diff)
	}
}

// A document and an event's details hide secrets as apl's own state
// does.
func TestDocumentAndDetailsRedactSecrets(t *testing.T) {
	const token = "ghp_abcdefghijklmnop"
	t.Setenv("DEPLOY_TOKEN", token)
	pb := load(t, `
playbook "leak" {}
document "d" {
  path    = "d.json"
  content = { env = try(steps.env.output, null) }
}
step "env" {
  shell { script = "env" }
  gate {
    rule "seen" {
      when    = "true"
      event   = "env_dumped"
      details = { env = steps.env.output }
    }
  }
}
`)
	res, _, work := start(t, pb, nil)
	for _, p := range []string{filepath.Join(work, "d.json"), filepath.Join(res.Dir, "state.json")} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), token) {
			t.Errorf("%s holds the token", p)
		}
		if !strings.Contains(string(b), "[REDACTED]") {
			t.Errorf("%s shows no redaction", p)
		}
	}
}

// Two documents, or a document and apl's state, cannot share a file.
func TestDocumentPathsMustDiffer(t *testing.T) {
	pb := load(t, `
playbook "twice" {}
input "name" {
  type = string
}
state {
  path = ".st/state.json"
}
document "a" {
  path    = "${inputs.name}.json"
  content = {}
}
document "b" {
  path    = "b.json"
  backup  = "${inputs.name}.json"
  content = {}
}
step "s" {
  shell { script = "true" }
}
`)
	for name, want := range map[string]string{"a": `document "b": a.json is also document "a"'s file`, ".st/state": `document "a": .st/state.json is also the state file`} {
		_, err := Start(context.Background(), pb, "twice", Options{Workdir: t.TempDir(), NoSync: true,
			Inputs: map[string]cty.Value{"name": cty.StringVal(name)}})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("name %s: err %v, want %q", name, err, want)
		}
	}
}

// A checkpoint that comes too soon after the last projection leaves the
// document to a timer: after a quiet moment (b's command sleeping), the
// document shows what changed meanwhile (a completed), though no
// checkpoint came since.
func TestDocumentCatchesUpWhileTheRunIsQuiet(t *testing.T) {
	pb := load(t, `
playbook "lag" {}
document "tasks" {
  path = "tasks.json"
  content = {
    tasks = try({ for k, it in steps.work.output.items : k => it.status }, {})
  }
}
step "work" {
  for_each    = "['a', 'b']"
  key         = "item"
  concurrency = 2
  step "one" {
    when = "item == 'a'"
    gate {
      otherwise {}
    }
  }
  step "two" {
    when = "item == 'a'"
    gate {
      otherwise {}
    }
  }
  step "slow" {
    when = "item == 'b'"
    shell { script = "sleep 0.5; cp tasks.json seen.json" }
  }
}
`)
	_, _, work := start(t, pb, nil)
	seen := readJSON(t, filepath.Join(work, "seen.json"))
	want := map[string]any{"a": "completed", "b": "running"}
	if diff := cmp.Diff(want, seen["tasks"]); diff != "" {
		t.Errorf("tasks while b sleeps (-want +got):\n%s", diff)
	}
}
