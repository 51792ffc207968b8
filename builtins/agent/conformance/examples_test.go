package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/builtins/agent/fakeserver"
)

// exampleRecording is how one example's cassette is recorded: the answers
// the fake server gives, in the order the calls ask for them, and what
// `apl run --json` must print with them.
type exampleRecording struct {
	// dir is the example's directory under examples/.
	dir string
	// server starts the fake server the example's driver reaches and
	// returns the environment apl runs in (added to this process's), with
	// home as the CLI's HOME.
	server func(t *testing.T, home string) (*fakeserver.Server, map[string]string)
	// replies are the fake model's answers, in order.
	replies []fakeserver.Reply
	// want is the run's output, as apl run --json prints it: the same the
	// example's script test (cmd/apl/testdata/script-examples) expects.
	want string
}

var exampleRecordings = []exampleRecording{
	{
		dir: "claude-code",
		// The real claude CLI, configured as the conformance suite does:
		// base URL on the fake server, a fake key, HOME in a temporary
		// directory, telemetry and updates off.
		server: func(t *testing.T, home string) (*fakeserver.Server, map[string]string) {
			srv := fakeserver.New()
			return srv, backendOf(t, agent.TypeClaudeCode).config(t, srv, home).Env
		},
		replies: []fakeserver.Reply{
			{Text: `{"verdict":"changes_requested","issues":[{"file":"store/file.go","line":42,"severity":"high","problem":"The state file is written in place, so a crash mid-write leaves it truncated."},{"file":"store/file.go","line":88,"severity":"low","problem":"The error from Close is ignored."}]}`,
				InputTokens: 1840, OutputTokens: 1204, CachedTokens: 41233},
			{Text: `{"must_fix":["Write the state file to a temporary file and rename it into place."],"summary":"The store can lose its state on a crash; fix the write before merging."}`,
				InputTokens: 960, OutputTokens: 96, CachedTokens: 11402},
		},
		want: `{"issues":2,"must_fix":["Write the state file to a temporary file and rename it into place."],"summary":"The store can lose its state on a crash; fix the write before merging.","verdict":"changes_requested"}`,
	},
	{
		dir: "local-openai",
		// apl's own openai driver; the example's driver block names
		// http://localhost:11434/v1 (Ollama), so the server listens there.
		server: func(t *testing.T, home string) (*fakeserver.Server, map[string]string) {
			srv, err := fakeserver.NewAt("127.0.0.1:11434")
			if err != nil {
				t.Fatalf("the fake server must listen where the example's base_url points (is Ollama running?): %v", err)
			}
			return srv, map[string]string{"HOME": home, "OPENAI_API_KEY": ""}
		},
		replies: []fakeserver.Reply{
			{Text: `{"type":"feat","scope":"agent","subject":"retry http driver calls on 429 and 5xx","body":"Rate limits and transient server errors used to fail the step on the\nfirst answer. The HTTP drivers now make up to three attempts, doubling\nthe wait each time, and wait as long as a Retry-After header asks."}`,
				InputTokens: 212, OutputTokens: 87},
			{Text: `{"ok":true,"problems":[]}`, InputTokens: 118, OutputTokens: 9},
		},
		want: `{"message":"feat(agent): retry http driver calls on 429 and 5xx\n\nRate limits and transient server errors used to fail the step on the\nfirst answer. The HTTP drivers now make up to three attempts, doubling\nthe wait each time, and wait as long as a Retry-After header asks.","ok":true,"problems":[]}`,
	},
}

// TestRecordExamples records examples/claude-code/cassette.jsonl and
// examples/local-openai/cassette.jsonl: apl run --record, the real claude
// CLI (pinned, from the conformance cache) or apl's openai driver, and the
// fake server answering with each example's canned answers. It runs only
// with APL_RECORD_EXAMPLES=1 (make record-examples) and overwrites the
// cassettes; review the diff, then update the versions in the READMEs.
func TestRecordExamples(t *testing.T) {
	if os.Getenv("APL_RECORD_EXAMPLES") != "1" {
		t.Skip("set APL_RECORD_EXAMPLES=1 (make record-examples) to record the examples' cassettes")
	}
	if cliSkip != "" {
		t.Fatalf("cannot record without the pinned CLIs: %s", cliSkip)
	}
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	apl := filepath.Join(t.TempDir(), "apl")
	build := exec.Command("go", "build", "-o", apl, "./cmd/apl")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, ex := range exampleRecordings {
		t.Run(ex.dir, func(t *testing.T) { recordExample(t, apl, filepath.Join(root, "examples", ex.dir), ex) })
	}
}

func recordExample(t *testing.T, apl, dir string, ex exampleRecording) {
	home, work := t.TempDir(), t.TempDir()
	srv, env := ex.server(t, home)
	defer srv.Close()
	srv.Push(ex.replies...)
	// Once the script is used up, fail loudly rather than answer "ok".
	srv.SetDefault(fakeserver.Reply{Status: 400, Message: "the recording's script is used up"})

	cassette := filepath.Join(work, "cassette.jsonl")
	cmd := exec.Command(apl, "run", dir, "--json", "-q", "--run-id", "record", "--record", cassette)
	cmd.Dir = work
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err == nil && len(srv.Turns()) != len(ex.replies) {
		err = fmt.Errorf("the model was asked %d times, want %d (one per agent call)", len(srv.Turns()), len(ex.replies))
	}
	if got := strings.TrimSpace(stdout.String()); err == nil && got != ex.want {
		err = fmt.Errorf("apl run printed\n%s\nwant\n%s", got, ex.want)
	}
	if err != nil {
		for i, r := range srv.Requests() {
			t.Logf("request %d: %s %s turn=%v model=%q prompt=%.80q", i, r.Method, r.Path, r.Turn, r.Model, r.Prompt)
		}
		t.Fatalf("apl run: %v\nstderr:\n%s", err, stderr.String())
	}
	data, err := os.ReadFile(cassette)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cassette.jsonl"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d bytes)", filepath.Join(dir, "cassette.jsonl"), len(data))
}

// backendOf returns the conformance backend of a driver type.
func backendOf(t *testing.T, typ string) backend {
	for _, b := range backends {
		if b.typ == typ {
			return b
		}
	}
	t.Fatalf("no conformance backend %q", typ)
	return backend{}
}

// TestExampleCassettesPinned checks that examples/claude-code's cassette
// came from the pinned claude CLI, as its README says: every answer's init
// message names the version. A change of pins fails here until the
// cassette is recorded again (make record-examples) and the README says
// so.
func TestExampleCassettesPinned(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "examples", "claude-code")
	version := pinned["@anthropic-ai/claude-code"]
	data, err := os.ReadFile(filepath.Join(dir, "cassette.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	for i, line := range lines {
		var e struct {
			Response struct{ Raw string } `json:"response"`
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("cassette line %d: %v", i+1, err)
		}
		first, _, _ := strings.Cut(e.Response.Raw, "\n")
		var init struct {
			Subtype string `json:"subtype"`
			Version string `json:"claude_code_version"`
		}
		if err := json.Unmarshal([]byte(first), &init); err != nil || init.Subtype != "init" || init.Version != version {
			t.Errorf("cassette line %d: the answer does not start with the init message of claude %s: %.200s", i+1, version, first)
		}
	}
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "claude "+version) {
		t.Errorf("examples/claude-code/README.md does not name the CLI version it was recorded with (%q)", "claude "+version)
	}
}
