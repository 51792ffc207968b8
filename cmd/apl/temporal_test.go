//go:build !notemporal

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/interp/temporal"
	"github.com/apl-lang/apl/lang"
)

// fakeRuns stands for a Temporal cluster: each Watch gives its observer
// the next events and returns the next result; Answer takes the answers
// (or refuses them with err).
type fakeRuns struct {
	t        *testing.T
	events   [][]interp.Event
	results  []*interp.Result
	answered []string
	how      []string // how each answer was given (Answer)
	from     []int
	err      error
	// interrupt makes Watch wait for Ctrl-C, which it sends itself.
	interrupt bool
	// watched counts the Watch calls.
	watched int
	// started is the workflow input of the last Start.
	started temporal.RunInput
	// input, when set, is what the run started with; the ask playbook's
	// input otherwise.
	input *temporal.RunInput
	// status is the workflow's status (Status); "running" if unset.
	status string
}

func (f *fakeRuns) Start(_ context.Context, pb *lang.Playbook, ref string, opts interp.Options, with ...temporal.StartOption) (string, error) {
	in, err := temporal.Input(pb, ref, opts, with...)
	f.started = in
	return opts.RunID, err
}

func (f *fakeRuns) Follow(id string, from int) runFollower {
	f.from = append(f.from, from)
	return fakeFollower{f}
}

// fakeFollower gives each Watch the fake cluster's next events and
// result.
type fakeFollower struct{ f *fakeRuns }

func (w fakeFollower) Watch(ctx context.Context, obs interp.Observer) (*interp.Result, error) {
	f := w.f
	f.watched++
	if f.interrupt {
		syscall.Kill(os.Getpid(), syscall.SIGINT)
		<-ctx.Done()
		return nil, ctx.Err()
	}
	for _, e := range f.events[0] {
		obs.Event(e)
	}
	res := f.results[0]
	f.events, f.results = f.events[1:], f.results[1:]
	return res, nil
}

func (f *fakeRuns) Answer(_ context.Context, id, key, choice, how string) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	f.answered = append(f.answered, key+"="+choice)
	f.how = append(f.how, how)
	return 7, nil
}

func (f *fakeRuns) StartedWith(_ context.Context, id string) (temporal.RunInput, error) {
	if f.input != nil {
		return *f.input, nil
	}
	pb, diags := (&lang.Loader{}).Load(askPlaybook)
	if diags.HasErrors() {
		f.t.Fatal(diags)
	}
	return temporal.Input(pb, askPlaybook, interp.Options{RunID: id})
}

func (f *fakeRuns) Status(context.Context, string) (string, error) {
	if f.status != "" {
		return f.status, nil
	}
	return "running", nil
}

func (f *fakeRuns) Close() {}

const askPlaybook = "../../interp/temporal/testdata/ask.hcl"

// onCluster puts f in the place of the cluster for the test.
func onCluster(t *testing.T, f *fakeRuns) {
	f.t = t
	was := dialRuns
	dialRuns = func(temporalFlags) (temporalRuns, error) { return f, nil }
	t.Cleanup(func() { dialRuns = was })
}

var (
	approve = interp.Waiting{Step: "approve", Question: "Ship v1.2?", Options: []string{"yes", "no"}}
	// waitingAtApprove is a run that waits as temporal.Watch reports it.
	waitingAtApprove = &interp.Result{RunID: "r1", Status: interp.StatusWaiting, Waiting: &approve, OutputJSON: json.RawMessage("{}"),
		Reason: "waiting for a decision at step approve: Ship v1.2? (options: yes, no)"}
	completed = &interp.Result{RunID: "r1", Status: interp.StatusCompleted,
		OutputJSON: json.RawMessage(`{"approved":"yes","shipped":"shipped v1.2: all good"}`)}
	// firstEvents are the events up to the question, details as they
	// come from the workflow (temporal puts their types back).
	firstEvents = []interp.Event{
		{Type: interp.EventRunStarted, Message: "run r1 of ask"},
		{Type: interp.EventStepStarted, Step: "prepare"},
		{Type: interp.EventStepCompleted, Step: "prepare", Details: map[string]any{interp.DetailDuration: 0.1, interp.DetailAgentCalls: 0}},
		{Type: interp.EventStepStarted, Step: "approve"},
	}
)

func runApl(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

// apl run --engine temporal prints the run's progress as a local run
// does, and when the run waits for a person, says so as a local run that
// pauses does, with the apl resume command that answers it on the
// cluster; --json prints only the object.
func TestRunTemporalWaits(t *testing.T) {
	f := &fakeRuns{events: [][]interp.Event{firstEvents}, results: []*interp.Result{waitingAtApprove}}
	onCluster(t, f)
	code, out, errs := runApl("run", askPlaybook, "--engine", "temporal", "--temporal-address", "tc:7233", "--run-id", "r1")
	if code != exitWaiting {
		t.Errorf("exit %d, want %d\n%s", code, exitWaiting, errs)
	}
	if want := "waiting: run r1 (temporal workflow r1)\n"; out != want {
		t.Errorf("stdout %q, want %q", out, want)
	}
	for _, want := range []string{
		"run r1 of ask\nStep: prepare\nStep: prepare complete. (0.1s)\nStep: approve\n",
		"apl: waiting for a decision at step approve: Ship v1.2? (options: yes, no); continue with apl resume r1 --engine temporal --temporal-address tc:7233 --answer approve=CHOICE\n",
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr has no %q:\n%s", want, errs)
		}
	}
	if len(f.from) != 1 || f.from[0] != 0 {
		t.Errorf("followed from %v, want the first event", f.from)
	}

	f = &fakeRuns{events: [][]interp.Event{firstEvents}, results: []*interp.Result{waitingAtApprove}}
	onCluster(t, f)
	code, out, _ = runApl("run", askPlaybook, "--engine", "temporal", "--temporal-address", "tc:7233", "--run-id", "r1", "--json")
	var obj map[string]any
	if err := json.Unmarshal([]byte(out), &obj); err != nil || code != exitWaiting || obj["status"] != "waiting" {
		t.Errorf("--json: exit %d, stdout %q (%v)", code, out, err)
	}
}

// apl resume --engine temporal sends the answers and follows the run on
// from the events after them, to its end.
func TestResumeTemporalAnswers(t *testing.T) {
	f := &fakeRuns{
		events: [][]interp.Event{{
			{Type: interp.EventHumanDecision, Step: "approve", Message: "Ship v1.2?: yes (answer given to resume)"},
			{Type: interp.EventRunCompleted, Message: "run completed", Details: map[string]any{interp.DetailStatus: "completed", interp.DetailDuration: 1.5, interp.DetailAgentCalls: 0}},
		}},
		results: []*interp.Result{completed},
	}
	onCluster(t, f)
	code, out, errs := runApl("resume", "r1", "--engine", "temporal", "--temporal-address", "tc:7233", "--answer", "approve=yes")
	if code != exitOK {
		t.Errorf("exit %d\n%s", code, errs)
	}
	if len(f.answered) != 1 || f.answered[0] != "approve=yes" || len(f.from) != 1 || f.from[0] != 7 || f.how[0] != "" {
		t.Errorf("answered %q (how %q), followed from %v", f.answered, f.how, f.from)
	}
	if !strings.HasPrefix(out, "completed: run r1 (temporal workflow r1)\n") || !strings.Contains(out, `"shipped": "shipped v1.2: all good"`) {
		t.Errorf("stdout:\n%s", out)
	}
	if want := "Decision: Ship v1.2?: yes (answer given to resume)\ncompleted in 1.5s\n"; errs != want {
		t.Errorf("stderr %q, want %q", errs, want)
	}

	// Without an answer, it follows the run from now on.
	f = &fakeRuns{events: [][]interp.Event{nil}, results: []*interp.Result{waitingAtApprove}}
	onCluster(t, f)
	if code, _, errs = runApl("resume", "r1", "--engine", "temporal", "--temporal-address", "tc:7233"); code != exitWaiting || f.from[0] != temporal.FromNow {
		t.Errorf("exit %d, from %v\n%s", code, f.from, errs)
	}
	if want := "following run r1 of ask on Temporal from now on\n"; !strings.HasPrefix(errs, want) {
		t.Errorf("stderr does not begin with %q:\n%s", want, errs)
	}
}

// apl resume --engine temporal follows a run with the playbook it started
// with, from the run's input, not from the files here: a run started in
// another checkout (or whose files changed or went since) is followed
// as it runs. Before, a sub-playbook missing here failed the resume.
func TestResumeTemporalLoadsTheRunsFiles(t *testing.T) {
	dir := t.TempDir()
	ask, err := os.ReadFile(askPlaybook)
	if err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(dir, "release"), 0o755)
	for name, src := range map[string]string{
		"main.hcl":        "playbook \"subask\" {}\nstep \"release\" {\n  playbook { source = \"./release\" }\n}\n",
		"release/ask.hcl": string(ask),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ref := filepath.Join(dir, "main.hcl")
	pb, diags := (&lang.Loader{}).Load(ref)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	in, err := temporal.Input(pb, ref, interp.Options{RunID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	// The run's checkout is elsewhere: nothing of it is here.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	f := &fakeRuns{input: &in, events: [][]interp.Event{nil}, results: []*interp.Result{completed}}
	onCluster(t, f)
	code, _, errs := runApl("resume", "r1", "--engine", "temporal", "--temporal-address", "tc:7233", "--answer", "release/approve=yes")
	if code != exitOK || len(f.answered) != 1 {
		t.Errorf("exit %d, answered %q\n%s", code, f.answered, errs)
	}
}

// A choice that is not one of the options is refused with the options;
// flags that have no meaning for a run on the cluster are refused.
func TestResumeTemporalRefuses(t *testing.T) {
	f := &fakeRuns{err: &interp.WaitingError{RunID: "r1", Key: "approve", Waiting: approve, Given: "maybe"}}
	onCluster(t, f)
	code, _, errs := runApl("resume", "r1", "--engine", "temporal", "--temporal-address", "tc:7233", "--answer", "approve=maybe")
	if want := `apl: --answer approve=maybe: step approve takes one of: yes, no, not "maybe"; run r1 is still waiting`; code != exitUsage || !strings.Contains(errs, want) {
		t.Errorf("exit %d, stderr %q, want %q", code, errs, want)
	}
	for _, args := range [][]string{
		{"resume", "--engine", "temporal", "--temporal-address", "tc:7233"},
		{"resume", "r1", "--engine", "temporal", "--temporal-address", "tc:7233", "--from", "approve"},
		{"resume", "r1", "--engine", "temporal", "--temporal-address", "tc:7233", "--record-missing", "c.jsonl"},
	} {
		if code, _, errs := runApl(args...); code != exitUsage {
			t.Errorf("%q: exit %d, want %d\n%s", args, code, exitUsage, errs)
		}
	}
}

// Ctrl-C stops following the run, which goes on, and says how to follow
// it again.
func TestRunTemporalInterrupted(t *testing.T) {
	onCluster(t, &fakeRuns{interrupt: true})
	code, _, errs := runApl("run", askPlaybook, "--engine", "temporal", "--temporal-address", "tc:7233", "--run-id", "r1")
	want := "apl: stopped following run r1; it goes on on the cluster; follow it again with: apl resume r1 --engine temporal --temporal-address tc:7233\n"
	if code != exitInterrupted || errs != want {
		t.Errorf("exit %d, stderr %q, want %q", code, errs, want)
	}
}

// apl worker refuses a negative --max-steps before it dials the cluster.
func TestWorkerMaxStepsNegative(t *testing.T) {
	e, _, _ := testEnv()
	err := (&workerCmd{TemporalAddress: "localhost:1", MaxSteps: -1}).Run(e)
	if exitOf(err) != exitUsage || !strings.Contains(err.Error(), "--max-steps -1") {
		t.Errorf("apl worker --max-steps -1: exit %d, %v", exitOf(err), err)
	}
}

// apl run --engine temporal --replay hands the cassette to the workflow,
// which answers the agent calls; a cassette that does not read is a usage
// error before the run starts, and recording is refused (the workflow
// cannot write the client's file).
func TestRunTemporalReplay(t *testing.T) {
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good.jsonl"), filepath.Join(dir, "bad.jsonl")
	os.WriteFile(good, []byte(`{"key":"k","seq":0,"request":{"step":"s","agent":"a","prompt":"p"},"response":{"text":"hi","usage":{}}}`+"\n"), 0o600)
	os.WriteFile(bad, []byte("not json\n"), 0o600)

	f := &fakeRuns{events: [][]interp.Event{firstEvents}, results: []*interp.Result{waitingAtApprove}}
	onCluster(t, f)
	code, _, errs := runApl("run", askPlaybook, "--engine", "temporal", "--temporal-address", "tc:7233", "--run-id", "r1", "--replay", good)
	if code != exitWaiting || f.started.CassetteName != good || !strings.Contains(string(f.started.Cassette), `"text":"hi"`) {
		t.Errorf("exit %d, cassette %q %q\n%s", code, f.started.CassetteName, f.started.Cassette, errs)
	}
	for _, tt := range []struct {
		flag, file, want string
	}{
		{"--replay", bad, "--replay: cassette " + bad + ":1"},
		{"--replay", filepath.Join(dir, "missing.jsonl"), "no such file"},
		{"--record", filepath.Join(dir, "new.jsonl"), "record a run locally, then replay it on the cluster with --replay"},
		{"--record-missing", good, "record a run locally"},
	} {
		onCluster(t, &fakeRuns{})
		code, _, errs := runApl("run", askPlaybook, "--engine", "temporal", "--temporal-address", "tc:7233", tt.flag, tt.file)
		if code != exitUsage || !strings.Contains(errs, tt.want) {
			t.Errorf("%s %s: exit %d, stderr %q, want %q", tt.flag, tt.file, code, errs, tt.want)
		}
	}
}

// apl show --engine temporal tells a run from its events as apl show
// tells a local run from its state: an item that finished with a status
// counts under it, and the run's agent calls and tokens, which come as
// ints once the client has put their types back, are kept.
func TestTemporalShowKeepsItemStatusesAndCounts(t *testing.T) {
	evs := []interp.Event{
		{Type: interp.EventRunStarted, Message: "run r1 of loop"},
		{Type: interp.EventStepStarted, Step: "tasks"},
		{Type: interp.EventItemStarted, Step: "tasks", Item: "a"},
		{Type: interp.EventItemCompleted, Step: "tasks", Item: "a", Message: "finished: verified"},
		{Type: interp.EventItemStarted, Step: "tasks", Item: "b"},
		{Type: interp.EventItemCompleted, Step: "tasks", Item: "b"},
		{Type: interp.EventStepCompleted, Step: "tasks", Details: map[string]any{interp.DetailDuration: 0.5, interp.DetailTokens: 120}},
		{Type: interp.EventRunCompleted, Details: map[string]any{interp.DetailStatus: "completed", interp.DetailDuration: 0.6,
			interp.DetailTokens: 120, interp.DetailAgentCalls: 3}},
	}
	st := runState(temporal.Shown{RunID: "r1", Playbook: "loop.hcl", Status: interp.StatusCompleted, Output: json.RawMessage("{}")}, evs)
	var b bytes.Buffer
	writeShow(&b, showRun(t.TempDir(), st))
	for _, want := range []string{"took 0.6s · 3 agent calls · 120 tokens", "tasks: completed (0.5s · 1 attempt · 120 tokens)", "items: 1 completed, 1 verified"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("apl show says\n%s\nwant %q in it", b.String(), want)
		}
	}
}

// At a terminal, apl run --engine temporal asks the question the run
// waits on there, as a local run does, sends the answer to the run and
// follows it on from where it stopped following (what came while the
// question was on the screen is shown after it, and nothing twice);
// --non-interactive leaves the run waiting, with exit 4.
func TestRunTemporalAsksAtTheTerminal(t *testing.T) {
	was := temporalAsker
	t.Cleanup(func() { temporalAsker = was })
	temporalAsker = func(w io.Writer, nonInteractive bool, p *progress) interp.Asker {
		if nonInteractive {
			return nil
		}
		return &termAsker{out: w, in: strings.NewReader("3\nyes\n"), hold: p.hold}
	}
	after := []interp.Event{
		{Type: interp.EventHumanDecision, Step: "approve", Message: "Ship v1.2?: yes (answer given to resume)"},
		{Type: interp.EventRunCompleted, Message: "run completed", Details: map[string]any{interp.DetailStatus: "completed", interp.DetailDuration: 1.5, interp.DetailAgentCalls: 0}},
	}
	f := &fakeRuns{events: [][]interp.Event{firstEvents, after}, results: []*interp.Result{waitingAtApprove, completed}}
	onCluster(t, f)
	code, out, errs := runApl("run", askPlaybook, "--engine", "temporal", "--temporal-address", "tc:7233", "--run-id", "r1")
	if code != exitOK {
		t.Errorf("exit %d, want %d\n%s", code, exitOK, errs)
	}
	if len(f.answered) != 1 || f.answered[0] != "approve=yes" || f.how[0] != interp.AnsweredAtTerminal {
		t.Errorf("answered %q (how %q), want approve=yes %s", f.answered, f.how, interp.AnsweredAtTerminal)
	}
	if len(f.from) != 1 || f.from[0] != 0 || f.watched != 2 {
		t.Errorf("followed from %v, watched %d times; want one follower from 0, watched again after the answer", f.from, f.watched)
	}
	if !strings.HasPrefix(out, "completed: run r1 (temporal workflow r1)\n") {
		t.Errorf("stdout:\n%s", out)
	}
	for _, want := range []string{
		"\napprove: Ship v1.2?\n  1) yes\n  2) no\nchoice> \"3\" is not one of the options.\n",
		"choice> Decision: Ship v1.2?: yes (answer given to resume)\ncompleted in 1.5s\n",
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr has no %q:\n%s", want, errs)
		}
	}

	// Answered elsewhere (apl ui) while the question was on the screen:
	// said, and the run is followed on.
	f = &fakeRuns{events: [][]interp.Event{firstEvents, after}, results: []*interp.Result{waitingAtApprove, completed},
		err: &temporal.NotAskedError{RunID: "r1", Key: "approve"}}
	onCluster(t, f)
	code, _, errs = runApl("run", askPlaybook, "--engine", "temporal", "--temporal-address", "tc:7233", "--run-id", "r1")
	if want := "apl: approve was answered elsewhere meanwhile (apl ui, apl resume --answer); yes is not sent\n"; code != exitOK || !strings.Contains(errs, want) {
		t.Errorf("answered elsewhere: exit %d, stderr\n%s\nwant %q in it", code, errs, want)
	}

	// The question's default is shown, and Enter takes it, as locally.
	temporalAsker = func(w io.Writer, nonInteractive bool, p *progress) interp.Asker {
		return &termAsker{out: w, in: strings.NewReader("\n"), hold: p.hold}
	}
	withDefault := *waitingAtApprove
	w := approve
	w.Default = "no"
	withDefault.Waiting = &w
	f = &fakeRuns{events: [][]interp.Event{firstEvents, after}, results: []*interp.Result{&withDefault, completed}}
	onCluster(t, f)
	code, _, errs = runApl("run", askPlaybook, "--engine", "temporal", "--temporal-address", "tc:7233", "--run-id", "r1")
	if code != exitOK || len(f.answered) != 1 || f.answered[0] != "approve=no" || !strings.Contains(errs, "  2) no (default)\n") {
		t.Errorf("with a default: exit %d, answered %q, stderr\n%s\nwant approve=no and the default shown", code, f.answered, errs)
	}
	temporalAsker = was

	f = &fakeRuns{events: [][]interp.Event{firstEvents}, results: []*interp.Result{waitingAtApprove}}
	onCluster(t, f)
	if code, _, errs := runApl("run", askPlaybook, "--engine", "temporal", "--temporal-address", "tc:7233", "--run-id", "r1", "--non-interactive"); code != exitWaiting || len(f.answered) > 0 {
		t.Errorf("--non-interactive: exit %d, answered %q\n%s", code, f.answered, errs)
	}
}

// A question on the screen whose run is cancelled on the cluster
// meanwhile (apl cancel elsewhere): the prompt ends, no answer is sent,
// and the run's end is reported, as when it was cancelled while
// followed.
func TestRunTemporalQuestionEndsWithItsRun(t *testing.T) {
	was, every := temporalAsker, askWatchEvery
	t.Cleanup(func() { temporalAsker, askWatchEvery = was, every })
	askWatchEvery = 10 * time.Millisecond
	never, w := io.Pipe() // no one types
	t.Cleanup(func() { w.Close() })
	temporalAsker = func(out io.Writer, _ bool, p *progress) interp.Asker {
		return &termAsker{out: out, in: never, hold: p.hold}
	}
	cancelled := &interp.Result{RunID: "r1", Status: interp.StatusInterrupted, Reason: "cancelled", OutputJSON: json.RawMessage("{}")}
	f := &fakeRuns{events: [][]interp.Event{firstEvents, nil}, results: []*interp.Result{waitingAtApprove, cancelled}, status: "completed"}
	onCluster(t, f)
	code, _, errs := runApl("run", askPlaybook, "--engine", "temporal", "--temporal-address", "tc:7233", "--run-id", "r1")
	if code != exitInterrupted || len(f.answered) > 0 {
		t.Errorf("exit %d, answered %q; want %d and no answer\n%s", code, f.answered, exitInterrupted, errs)
	}
	for _, want := range []string{"choice> \napl: run r1 ended on the cluster while approve was asked", "run r1 was cancelled on the cluster: it ended interrupted"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr has no %q:\n%s", want, errs)
		}
	}
}
