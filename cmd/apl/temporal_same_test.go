//go:build !race && !notemporal

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// sameCase is a run that TestTemporalSameAsLocal makes on both engines.
type sameCase struct {
	name, ref string
	// args are apl run's flags besides the engine's; env is set for the
	// local run and for the worker (agents get the worker's environment).
	args, env []string
	// project makes the project a run works in: the local run's, and the
	// worker's checkout (nil: an empty directory).
	project func(t *testing.T, dir string)
	// answers answer the questions the run waits on, in turn
	// (STEP[ITEM]=CHOICE), as apl resume --answer does.
	answers []string
	// timed are output fields, at any depth, whose values may differ
	// (durations, times, fresh ids); both runs must have them.
	timed []string
}

// TestTemporalSameAsLocal runs each example (each scenario of the
// phase-gates fork in a scratch git project) and each stdlib playbook
// (with the stand-in agents of interp/temporal's tests) with apl run
// --json on the local engine, then with --engine temporal against an apl
// worker process in a checkout of its own, on the real server in its own
// process, and compares what a user sees: the output, the exit code, the
// status and the path (apl show --json), and the project's commits and
// files.
// Commit dates are fixed, so the same work gives the same commit ids.
func TestTemporalSameAsLocal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	addr, ns := devServer(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	base := append(os.Environ(), "APL_TEMPORAL_ADDRESS="+addr, "APL_TEMPORAL_NAMESPACE="+ns, "HOME="+home, "NO_COLOR=1",
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+filepath.Join(home, ".gitconfig"),
		"GIT_AUTHOR_NAME=apl test", "GIT_AUTHOR_EMAIL=apl@example.com", "GIT_COMMITTER_NAME=apl test", "GIT_COMMITTER_EMAIL=apl@example.com",
		"GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z")
	h := &sameHarness{exe: exe, env: base}
	began := time.Now()
	cases := sameCases(t, repo)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h.compare(t, c)
		})
	}
	t.Cleanup(func() { t.Logf("%d cases in %s", len(cases), time.Since(began)) })
}

// sameCases are the examples and the stdlib playbooks, as they run.
func sameCases(t *testing.T, repo string) []sameCase {
	ex := func(p ...string) string { return filepath.Join(append([]string{repo, "examples"}, p...)...) }
	td := func(p ...string) string {
		return filepath.Join(append([]string{repo, "interp", "temporal", "testdata"}, p...)...)
	}
	var cases []sameCase

	// The phase-gates fork: every scenario of agent.sh, the quality mode
	// and a plan that exists already, in a scratch git project.
	scenarios, err := filepath.Glob(ex("phase-gates", "scenarios", "*"))
	if err != nil || len(scenarios) == 0 {
		t.Fatalf("no phase-gates scenarios (%v)", err)
	}
	gates := func(name, scenario string, existingPlan bool, args ...string) sameCase {
		return sameCase{name: "phase-gates/" + name, ref: ex("phase-gates"),
			args: append([]string{"--phase", "6.3", "--last-checkpoint-sha", "HEAD_SHA", "--agent-cmd", ex("phase-gates", "agent.sh")}, args...),
			env:  []string{"SCENARIO=" + scenario}, timed: []string{"verification_duration_seconds"},
			project: func(t *testing.T, dir string) {
				copyDir(t, ex("phase-gates", "project"), dir)
				if existingPlan {
					copyFile(t, ex("phase-gates", "scenarios", "default", "PLAN.md"), filepath.Join(dir, ".planning", "phases", "6.3", "PLAN.md"))
				}
				gitInit(t, dir)
			}}
	}
	for _, s := range scenarios {
		if sc := filepath.Base(s); sc != "default" {
			cases = append(cases, gates(sc, sc, false))
		}
	}
	cases = append(cases, gates("pass/quality", "pass", false, "--mode", "quality"),
		gates("pass/existing_plan", "pass", true, "--var", "existing_plan=true"))

	// The conductor escalates T3's high-severity rejection to a person:
	// skipped, or retried until it is escalated twice.
	for _, answer := range []string{"skip", "retry"} {
		cases = append(cases, sameCase{name: "conductor/" + answer, ref: ex("conductor"),
			args:    []string{"--var", "tasks_file=" + ex("conductor", ".homerun", "tasks.json"), "--agent-cmd", "bash " + ex("conductor", "agent.sh")},
			answers: []string{"escalate[T3]=" + answer, "escalate[T3]=" + answer}})
	}
	for _, name := range []string{"claude-code", "local-openai"} {
		cases = append(cases, sameCase{name: name, ref: ex(name), args: []string{"--replay", ex(name, "cassette.jsonl")}})
	}

	// The stdlib playbooks and their forks, in a git project, with
	// answers.sh answering from the stdlib tests' mocks.
	agent := func(dirs ...string) []string {
		cmd := "bash " + td("answers.sh")
		for _, d := range dirs {
			cmd += " " + td(d)
		}
		return []string{"--agent-cmd", cmd}
	}
	phase := []string{"--var", "phase_id=6.3", "--var", "phase_name=config loader"}
	inGit := func(files string) func(*testing.T, string) {
		return func(t *testing.T, dir string) {
			if files != "" {
				copyDir(t, td("projects", files), dir)
			}
			gitInit(t, dir)
		}
	}
	risk := []string{"total_time_seconds", "run_id", "report", "started_at", "ended_at"}
	for _, ref := range []string{"stdlib:phase-runner", ex("phase-runner-lenient"), ex("phase-runner-quality")} {
		cases = append(cases, sameCase{name: filepath.Base(strings.TrimPrefix(ref, "stdlib:")), ref: ref, project: inGit(""),
			args: slices.Concat(phase, agent("phase-runner")), timed: []string{"verification_duration_seconds"}})
	}
	cases = append(cases,
		sameCase{name: "phase-runner/debug", ref: "stdlib:phase-runner", project: inGit(""),
			args: slices.Concat(phase, agent("phase-runner-debug", "phase-runner")), timed: []string{"verification_duration_seconds"}},
		sameCase{name: "risk-pipeline/low", ref: "stdlib:risk-pipeline", project: inGit(""), timed: risk,
			args: slices.Concat(agent("risk-pipeline"), []string{"--var", "task=Fix typo in README.md", "--var", `gate_commands=["true", "echo ok"]`})},
		sameCase{name: "risk-pipeline/high", ref: "stdlib:risk-pipeline", project: inGit(""), timed: risk,
			args: slices.Concat(agent("risk-pipeline"), []string{"--var", "task=Add JWT authentication endpoint", "--var", `gate_commands=["true"]`})},
		sameCase{name: "risk-pipeline/gate_fails", ref: "stdlib:risk-pipeline", project: inGit(""), timed: risk,
			args: slices.Concat(agent("risk-pipeline"), []string{"--var", "task=Fix typo in README.md", "--var", `gate_commands=["exit 3"]`})},
		sameCase{name: "conductor-stdlib", ref: "stdlib:conductor", project: inGit("conductor"), timed: []string{"completed_at"},
			args: agent("conductor")},
		sameCase{name: "orchestrator", ref: "stdlib:orchestrator", project: inGit("orchestrator"), timed: []string{"run_id", "timestamp", "duration_minutes"},
			args: agent("phase-runner")},
	)
	return cases
}

// sameHarness runs apl processes: this test binary, which acts as apl
// (TestMain).
type sameHarness struct {
	exe string
	env []string
	mu  sync.Mutex
	n   int
}

// ended is what a run showed its user.
type ended struct {
	stdout, stderr string
	code           int
	status         string
	path           []string
}

func (h *sameHarness) compare(t *testing.T, c sameCase) {
	h.mu.Lock()
	h.n++
	id := fmt.Sprintf("same-%d", h.n)
	h.mu.Unlock()
	local, checkout := t.TempDir(), t.TempDir()
	if c.project != nil {
		c.project(t, local)
		c.project(t, checkout)
	}
	env := append(slices.Clone(h.env), c.env...)
	args := slices.Clone(c.args)
	for i, a := range args {
		if a == "HEAD_SHA" {
			args[i] = strings.TrimSpace(h.git(t, local, "rev-parse", "HEAD"))
		}
	}
	began := time.Now()
	l := h.run(t, local, env, id, c, args)
	t.Logf("local: %s", time.Since(began))

	queue := "q-" + id
	h.worker(t, checkout, env, queue)
	began = time.Now()
	// The client is not in the checkout: it sends the playbook, and the
	// run works in the worker's.
	r := h.run(t, t.TempDir(), h.env, id, c, append(args, "--engine", "temporal", "--task-queue", queue))
	t.Logf("Temporal: %s", time.Since(began))

	lo, ro := untimedJSON(t, l.stdout, c.timed), untimedJSON(t, r.stdout, c.timed)
	if lo != ro || strings.Count(l.stdout, `\u00`) != strings.Count(r.stdout, `\u00`) {
		t.Errorf("--json:\nlocal    %s\nTemporal %s", lo, ro)
	}
	if l.code != r.code || l.status != r.status {
		t.Errorf("local exited %d (%s), Temporal %d (%s)\nlocal stderr:\n%s\nTemporal stderr:\n%s", l.code, l.status, r.code, r.status, l.stderr, r.stderr)
	}
	if len(c.answers) > 0 {
		// A local run answered with apl resume walks again from where
		// it stopped, and its path holds the steps of both walks; the
		// workflow waited in place. Each step is compared once.
		l.path, r.path = firstVisits(l.path), firstVisits(r.path)
	}
	if !slices.Equal(l.path, r.path) {
		t.Errorf("path:\nlocal    %q\nTemporal %q", l.path, r.path)
	}
	if c.project != nil {
		lg, rg := h.git(t, local, "log", "--all", "--format=%H %s"), h.git(t, checkout, "log", "--all", "--format=%H %s")
		if lg != rg {
			t.Errorf("commits:\nlocal\n%s\nworker\n%s", lg, rg)
		}
		// The documents, post-mortems and logs the run wrote, by name:
		// in the worker's checkout, all of them.
		if lf, rf := checkoutFiles(t, local), checkoutFiles(t, checkout); !slices.Equal(lf, rf) {
			t.Errorf("files:\nlocal  %q\nworker %q", lf, rf)
		}
	}
	t.Logf("exit %d, %s, %d steps", r.code, r.status, len(r.path))
}

// run runs the case's playbook in dir with apl run --json, answers what
// it waits on with apl resume, and shows it (apl show --json).
func (h *sameHarness) run(t *testing.T, dir string, env []string, id string, c sameCase, args []string) ended {
	var engine []string
	for i, a := range args {
		if a == "--engine" || a == "--task-queue" {
			engine = append(engine, a, args[i+1])
		}
	}
	e := h.apl(t, dir, env, slices.Concat([]string{"run", c.ref, "--json", "--non-interactive", "--run-id", id}, args)...)
	for _, a := range c.answers {
		if e.code != 4 {
			break
		}
		e = h.apl(t, dir, env, slices.Concat([]string{"resume", id, "--json", "--non-interactive", "--answer", a}, engine)...)
	}
	shown := h.apl(t, dir, env, slices.Concat([]string{"show", id, "--json"}, engine)...)
	var show struct {
		Status string   `json:"status"`
		Path   []string `json:"path"`
	}
	if err := json.Unmarshal([]byte(shown.stdout), &show); err != nil {
		t.Fatalf("apl show %s: %v\n%s%s", id, err, shown.stdout, shown.stderr)
	}
	e.status, e.path = show.Status, itemsInOrder(show.Path)
	return e
}

// apl runs apl with args in dir, for two minutes at most.
func (h *sameHarness) apl(t *testing.T, dir string, env []string, args ...string) ended {
	t.Helper()
	cmd := exec.Command(h.exe, args...)
	cmd.Args[0] = "apl"
	cmd.Dir, cmd.Env = dir, env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(2*time.Minute, func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	err := cmd.Wait()
	timer.Stop()
	code := 0
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return ended{stdout: out.String(), stderr: errb.String(), code: code}
}

// worker starts apl worker in checkout on queue, and stops it (SIGTERM)
// with the test.
func (h *sameHarness) worker(t *testing.T, checkout string, env []string, queue string) {
	t.Helper()
	cmd := exec.Command(h.exe, "worker", "--task-queue", queue, "--workdir", checkout, "--name", queue)
	cmd.Args[0] = "apl"
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var log bytes.Buffer
	serving := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		said := false
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if !said && strings.Contains(sc.Text(), "serving task queue") {
				said = true
				serving <- true
			}
		}
		if !said {
			serving <- false
		}
		cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	select {
	case ok := <-serving:
		if !ok {
			t.Fatalf("apl worker exited:\n%s", log.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("apl worker did not start serving within a minute")
	}
}

func (h *sameHarness) git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = dir, h.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// gitInit makes dir a git repository with one commit of its files.
func gitInit(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "--allow-empty", "-m", "start"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=apl test", "GIT_AUTHOR_EMAIL=apl@example.com",
			"GIT_COMMITTER_NAME=apl test", "GIT_COMMITTER_EMAIL=apl@example.com", "GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", args[0], err, out)
		}
	}
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if out, err := exec.Command("cp", "-R", from+"/.", to).CombinedOutput(); err != nil {
		t.Fatalf("cp %s: %v\n%s", from, err, out)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err == nil {
		err = os.MkdirAll(filepath.Dir(to), 0o755)
	}
	if err == nil {
		err = os.WriteFile(to, b, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// itemsInOrder puts a path's for_each items, which run concurrently, in
// a fixed order; the steps outside items keep theirs.
func itemsInOrder(path []string) []string {
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

// checkoutFiles are the files in a project, by path (a fresh id in one
// as "ID"), but for git's and apl's own.
var freshID = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

func checkoutFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == ".apl") {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, freshID.ReplaceAllString(rel, "ID"))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// firstVisits is path with each step once, where it came first.
func firstVisits(path []string) []string {
	var out []string
	for _, p := range path {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// untimedJSON is the JSON out with every field named in timed, at any
// depth, set to "(varies)"; each must be there.
func untimedJSON(t *testing.T, out string, timed []string) string {
	t.Helper()
	if len(timed) == 0 || strings.TrimSpace(out) == "" {
		return strings.TrimSpace(out)
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
