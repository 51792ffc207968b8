//go:build !race

// The in-process Temporal server is too slow under the race detector:
// these tests run without it.

package temporal

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/lang"
	"github.com/apl-lang/apl/stdlib"
	"github.com/zclconf/go-cty/cty"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/server/temporaltest"
)

func loader() *lang.Loader {
	return &lang.Loader{Stdlib: stdlib.FS(), Builtins: builtins.Funcs().Names(), Signatures: builtins.Funcs(),
		DecodeAnswer: agent.CheckAnswer, CheckScript: builtins.CheckScriptTemplate, Drivers: agent.DriverSchema{}}
}

// server starts an in-process Temporal server and returns its client.
func server(t *testing.T) client.Client {
	t.Helper()
	ts := temporaltest.NewServer(temporaltest.WithT(t))
	return ts.GetDefaultClient()
}

// startWorker runs a worker on queue with its project at workdir.
func startWorker(t *testing.T, c client.Client, queue, workdir string) worker.Worker {
	t.Helper()
	w, err := NewWorker(c, queue, Config{Loader: loader(), Workdir: workdir, HeartbeatTimeout: 5 * time.Second}, worker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return w
}

// ran is what a run did that a user sees: how it ended, its output,
// and the steps it took.
type ran struct {
	status, recommendation, output string
	path                           []string
}

// normal puts the path's for_each items, which run concurrently, in a
// fixed order; the steps outside items keep theirs.
func normal(path []string) []string {
	var top, items []string
	for _, p := range path {
		if strings.Contains(p, "[") {
			items = append(items, p)
		} else {
			top = append(top, p)
		}
	}
	slices.Sort(items)
	return append(top, items...)
}

func runLocal(t *testing.T, pb *lang.Playbook, ref string, opts interp.Options) ran {
	t.Helper()
	var path []string
	if opts.Workdir == "" {
		opts.Workdir = t.TempDir()
	}
	opts.NoSync = true
	opts.Observer = interp.ObserverFunc(func(e interp.Event) { path = append(path, interp.PathEntry(e)...) })
	res, err := interp.Start(context.Background(), pb, ref, opts)
	if err != nil {
		t.Fatalf("local run of %s: %v", ref, err)
	}
	return ran{res.Status, res.Recommendation, string(res.OutputJSON), normal(path)}
}

// runTemporal runs pb on the workers of queue. The run gets no answers
// when it starts: it waits, and each of opts.Answers (by STEP[ITEM], else
// by STEP) answers it through the signal, as apl resume --answer does.
func runTemporal(t *testing.T, c client.Client, queue string, pb *lang.Playbook, ref string, opts interp.Options, with ...StartOption) ran {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	answers := opts.Answers
	opts.Answers = nil
	res, path, err := Run(ctx, c, queue, pb, ref, opts, with...)
	for err == nil && res.Status == interp.StatusWaiting {
		key := res.Waiting.Key()
		choice, ok := answers[key]
		if !ok {
			if choice, ok = answers[res.Waiting.Step]; !ok {
				t.Fatalf("Temporal run of %s waits with no answer given: %s", ref, res.Reason)
			}
		}
		from, err := SendAnswer(ctx, c, res.RunID, key, choice)
		if err != nil {
			t.Fatalf("answering %s=%s: %v", key, choice, err)
		}
		res, path, err = Watch(ctx, c, res.RunID, from, nil)
	}
	if err != nil {
		t.Fatalf("Temporal run of %s: %v", ref, err)
	}
	return ran{res.Status, res.Recommendation, string(res.OutputJSON), normal(path)}
}

// A playbook run on Temporal ends as it does locally, with the same
// output, having taken the same steps.
func TestSameAsLocal(t *testing.T) {
	c := server(t)
	startWorker(t, c, "q", t.TempDir())
	agentCmd, err := filepath.Abs("testdata/agent.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"testdata/shell.hcl", "testdata/gates.hcl", "testdata/foreach.hcl", "testdata/agent.hcl"} {
		t.Run(filepath.Base(ref), func(t *testing.T) {
			pb, diags := loader().Load(ref)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			sameAsLocal(t, c, "q", pb, ref, interp.Options{AgentCommand: []string{agentCmd}})
		})
	}
}

// sameAsLocal runs pb locally and on the workers of queue and compares
// how the runs ended, their outputs and their paths.
// Output fields named in timed, at any depth, are durations, times and
// fresh ids: both runs must have them, their values may differ.
func sameAsLocal(t *testing.T, c client.Client, queue string, pb *lang.Playbook, ref string, opts interp.Options, timed ...string) {
	t.Helper()
	local := runLocal(t, pb, ref, opts)
	remote := runTemporal(t, c, queue, pb, ref, opts)
	sameRuns(t, ref, local, remote, timed...)
}

// sameAsLocalReplaying is sameAsLocal with every agent call of both runs
// answered from the cassette file: locally by a cassette driver, on
// Temporal by the workflow (Replay).
func sameAsLocalReplaying(t *testing.T, c client.Client, queue string, pb *lang.Playbook, ref, cassette string, opts interp.Options) {
	t.Helper()
	tape, err := agent.OpenCassette(cassette, agent.CassetteReplay)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(cassette)
	if err != nil {
		t.Fatal(err)
	}
	lopts := opts
	lopts.Drivers = func(*lang.Agent) (agent.Driver, error) { return tape.Wrap(nil), nil }
	local := runLocal(t, pb, ref, lopts)
	remote := runTemporal(t, c, queue, pb, ref, opts, Replay(cassette, data))
	sameRuns(t, ref, local, remote)
}

// sameRuns compares a local run and a Temporal run of ref.
func sameRuns(t *testing.T, ref string, local, remote ran, timed ...string) {
	t.Helper()
	local.output, remote.output = untimed(t, local.output, timed), untimed(t, remote.output, timed)
	if local.status != remote.status || local.recommendation != remote.recommendation {
		t.Errorf("status: local %s (%s), Temporal %s (%s)", local.status, local.recommendation, remote.status, remote.recommendation)
	}
	if local.output != remote.output {
		t.Errorf("output:\nlocal    %s\nTemporal %s", local.output, remote.output)
	}
	if !slices.Equal(local.path, remote.path) {
		t.Errorf("path:\nlocal    %q\nTemporal %q", local.path, remote.path)
	}
	t.Logf("%s: %s %s %q", ref, remote.status, remote.output, remote.path)
}

// The examples/ playbooks run on Temporal as they do locally, with their
// example agents (issue 15). The phase-gates fork, which works in a git
// project, is run through apl processes (cmd/apl's
// TestTemporalSameAsLocal).
func TestExamplesSameAsLocal(t *testing.T) {
	c := server(t)
	startWorker(t, c, "examples", t.TempDir())
	type example struct {
		name, dir, skip string
		opts            interp.Options
		// cassette, when set, answers the example's agent calls: its
		// driver (the claude CLI, an OpenAI-compatible server) does not
		// run.
		cassette string
	}
	conductorAgent, err := filepath.Abs("../../examples/conductor/agent.sh")
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := filepath.Abs("../../examples/conductor/.homerun/tasks.json")
	if err != nil {
		t.Fatal(err)
	}
	conductor := func(answer string) example {
		return example{name: "conductor/" + answer, dir: "conductor", opts: interp.Options{
			Inputs:       map[string]cty.Value{"tasks_file": cty.StringVal(tasks)},
			AgentCommand: []string{"bash", conductorAgent}, Answers: map[string]string{"escalate[T3]": answer}}}
	}
	tests := []example{
		// The conductor escalates T3's high-severity rejection to a
		// person: skipped, or retried until it is escalated twice.
		conductor("skip"), conductor("retry"),
		{name: "claude-code", dir: "claude-code", cassette: "cassette.jsonl"},
		{name: "local-openai", dir: "local-openai", cassette: "cassette.jsonl"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.skip != "" {
				t.Skip(tt.skip)
			}
			ref := filepath.Join("../../examples", tt.dir)
			pb, diags := loader().Load(ref)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			if tt.cassette != "" {
				sameAsLocalReplaying(t, c, "examples", pb, ref, filepath.Join(ref, tt.cassette), tt.opts)
				return
			}
			sameAsLocal(t, c, "examples", pb, ref, tt.opts)
		})
	}
}

// untimed is the output JSON out with every field named in timed, at
// any depth, set to "(varies)"; each must be there.
func untimed(t *testing.T, out string, timed []string) string {
	t.Helper()
	if len(timed) == 0 {
		return out
	}
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("output %s: %v", out, err)
	}
	seen := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if slices.Contains(timed, k) {
					v[k], seen[k] = "(varies)", true
				} else {
					walk(e)
				}
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	for _, k := range timed {
		if !seen[k] {
			t.Errorf("output has no %s: %s", k, out)
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// gitProject is a project directory that is a git repository with one
// commit of the files of testdata/projects/PROJECT (none for "").
func gitProject(t *testing.T, project string) string {
	t.Helper()
	dir := t.TempDir()
	if project != "" {
		if out, err := exec.Command("cp", "-R", filepath.Join("testdata", "projects", project)+"/.", dir).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v\n%s", err, out)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=apl", "-c", "user.email=apl@example.com", "commit", "-q", "--allow-empty", "-m", "start"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", args[0], err, out)
		}
	}
	return dir
}

// The stdlib playbooks and their fork examples/phase-runner-lenient run
// on Temporal as they do locally, in a git project, with testdata/answers.sh
// answering from the stdlib tests' mocks.
func TestStdlibSameAsLocal(t *testing.T) {
	c := server(t)
	answers, err := filepath.Abs("testdata/answers.sh")
	if err != nil {
		t.Fatal(err)
	}
	testdata, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	agent := func(dirs ...string) []string {
		cmd := []string{"bash", answers}
		for _, d := range dirs {
			cmd = append(cmd, filepath.Join(testdata, d))
		}
		return cmd
	}
	riskTimed := []string{"total_time_seconds", "run_id", "report", "started_at", "ended_at"}
	phase := map[string]cty.Value{"phase_id": cty.StringVal("6.3"), "phase_name": cty.StringVal("config loader")}
	tests := []struct {
		name, ref, skip string
		opts            interp.Options
		timed           []string
		// project is the project's files, in both projects (a directory
		// of testdata/projects); docs is the directory of the documents,
		// compared after the runs.
		project, docs string
	}{
		{name: "phase-runner", ref: "stdlib:phase-runner", timed: []string{"verification_duration_seconds"},
			opts: interp.Options{Inputs: phase, AgentCommand: agent("phase-runner")}},
		{name: "phase-runner/debug", ref: "stdlib:phase-runner", timed: []string{"verification_duration_seconds"},
			opts: interp.Options{Inputs: phase, AgentCommand: agent("phase-runner-debug", "phase-runner")}},
		{name: "phase-runner-lenient", ref: "../../examples/phase-runner-lenient", timed: []string{"verification_duration_seconds"},
			opts: interp.Options{Inputs: phase, AgentCommand: agent("phase-runner")}},
		{name: "risk-pipeline/low", ref: "stdlib:risk-pipeline", timed: riskTimed,
			opts: interp.Options{AgentCommand: agent("risk-pipeline"), Inputs: map[string]cty.Value{
				"task": cty.StringVal("Fix typo in README.md"), "gate_commands": cty.ListVal([]cty.Value{cty.StringVal("true"), cty.StringVal("echo ok")})}}},
		{name: "risk-pipeline/high", ref: "stdlib:risk-pipeline", timed: riskTimed,
			opts: interp.Options{AgentCommand: agent("risk-pipeline"), Inputs: map[string]cty.Value{
				"task": cty.StringVal("Add JWT authentication endpoint"), "gate_commands": cty.ListVal([]cty.Value{cty.StringVal("true")})}}},
		{name: "risk-pipeline/gate_fails", ref: "stdlib:risk-pipeline", timed: riskTimed,
			opts: interp.Options{AgentCommand: agent("risk-pipeline"), Inputs: map[string]cty.Value{
				"task": cty.StringVal("Fix typo in README.md"), "gate_commands": cty.ListVal([]cty.Value{cty.StringVal("exit 3")})}}},
		// Three tasks in a row, every review approves (no ask step is
		// reached); state.json on the worker.
		{name: "conductor", ref: "stdlib:conductor", project: "conductor", docs: "state.json", timed: []string{"completed_at"},
			opts: interp.Options{AgentCommand: agent("conductor")}},
		// Three phases in a row, each a child workflow running
		// stdlib:phase-runner; .autopilot/state.json and its archive on
		// the worker.
		{name: "orchestrator", ref: "stdlib:orchestrator", project: "orchestrator", docs: ".autopilot",
			timed: []string{"run_id", "timestamp", "duration_minutes"},
			opts:  interp.Options{AgentCommand: agent("phase-runner")}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.skip != "" {
				t.Skip(tt.skip)
			}
			queue := fmt.Sprintf("stdlib-%d", i)
			worker := gitProject(t, tt.project)
			startWorker(t, c, queue, worker)
			pb, diags := loader().Load(tt.ref)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			tt.opts.Workdir = gitProject(t, tt.project)
			tt.opts.RunID = fmt.Sprintf("stdlib-%d-%d", i, time.Now().UnixNano())
			sameAsLocal(t, c, queue, pb, tt.ref, tt.opts, tt.timed...)
			if tt.docs != "" {
				sameFiles(t, tt.opts.Workdir, worker, tt.docs)
			}
		})
	}
}
