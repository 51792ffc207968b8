package interp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apl-lang/apl/builtins"
	"github.com/google/go-cmp/cmp"
)

// A span is encoded by hand, for speed: it must read back as the same
// fields encoding/json would have written, in the same order, escapes
// and empty optional fields included.
func TestSpanJSON(t *testing.T) {
	at := time.Date(2026, 11, 26, 21, 0, 0, 123456789, time.UTC)
	for _, sp := range []Span{
		{Timestamp: at, RunID: "r1", Step: "s", Action: "command_run", Status: "success"},
		{Timestamp: at.In(time.FixedZone("x", 3600)), RunID: "r1", Step: "s", Item: "it\"em", Action: "agent_call",
			InputSummary: "a \\ b\n\t\x01 é 日本 \u2028", OutputSummary: "exit 0: ok", DurationMS: 1234, Status: "failure",
			Attempt: 3, Artifact: "artifacts/s-3.stdout", SessionID: "sess"},
		{Timestamp: at, RunID: "r", Step: "s", Action: "a", OutputSummary: "bad \xff utf-8", Status: "success"},
	} {
		want, err := json.Marshal(sp)
		if err != nil {
			t.Fatal(err)
		}
		got := sp.appendJSON(nil)
		if string(got) != string(want) {
			t.Errorf("got  %s\nwant %s", got, want)
		}
		var a, b map[string]any
		if err := json.Unmarshal(got, &a); err != nil {
			t.Fatalf("%s: %v", got, err)
		}
		json.Unmarshal(want, &b)
		if diff := cmp.Diff(b, a); diff != "" {
			t.Errorf("fields differ (-encoding/json +appendJSON):\n%s", diff)
		}
	}
}

// A summary that needs no change is kept as it is; every other is put on
// one line with single spaces and cut to 200 characters, as before.
func TestSummarize(t *testing.T) {
	long := strings.Repeat("abc ", 60) // 240 bytes
	for in, want := range map[string]string{
		"":                       "",
		"exit 0:":                "exit 0:",
		"exit 0: ":               "exit 0:",
		" exit 0":                "exit 0",
		"a  b":                   "a b",
		"a\tb\nc":                "a b c",
		"a\x01b":                 "a\x01b",
		"ünï  cødé":              "ünï cødé",
		"a\u00a0b":               "a b",
		long[:200]:               long[:199],
		long[:201]:               long[:197] + "...",
		strings.Repeat("x", 200): strings.Repeat("x", 200),
		strings.Repeat("é", 201): strings.Repeat("é", 197) + "...",
	} {
		if got := summarize(in); got != want {
			t.Errorf("summarize(%q) = %q, want %q", in, got, want)
		}
	}
	if got := exitSummary(builtins.ShellResult{ExitCode: 2, Stdout: "out\n"}); summarize(got) != "exit 2: out" {
		t.Errorf("exit summary %q", got)
	}
}

// A quick command's span is held back off the path between steps, but
// written while the next command runs: that command finds it in the
// trace. Spans keep their order: the command's before its gate's
// decision, every step's before the next one's.
func TestCommandSpanWrittenWhileTheNextRuns(t *testing.T) {
	pb := load(t, `
playbook "spans" {}
step "first" {
  shell { command = ["true"] }
  gate {
    rule "on" {
      when = "true"
    }
  }
}
step "second" {
  shell { command = ["true"] }
}
step "third" {
  shell { script = "for i in $(seq 500); do grep -q '\"step\":\"second\"' ${run.dir}/trace.jsonl && exit 0; sleep 0.01; done; exit 1" }
}
`)
	res, _, _ := start(t, pb, nil)
	if res.Status != StatusCompleted {
		t.Fatalf("status %s: %s (the third step never saw the second's span)", res.Status, res.Reason)
	}
	b, err := os.ReadFile(filepath.Join(res.Dir, "trace.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var sp Span
		if err := json.Unmarshal([]byte(line), &sp); err != nil {
			t.Fatal(err)
		}
		got = append(got, sp.Step+" "+sp.Action)
	}
	want := []string{"first command_run", "first decision", "second command_run", "third command_run"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("spans (-want +got):\n%s", diff)
	}
}

// A held span reaches the trace when the next process starts, and one
// write puts every held span there in order.
func TestHeldSpansWrittenAsAProcessStarts(t *testing.T) {
	d, _, err := createRunDir(t.TempDir(), "r")
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	trace := func() string {
		b, err := os.ReadFile(filepath.Join(d.path, "trace.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	d.holdSpan(Span{Step: "a", Action: "command_run", Status: "success"})
	d.holdSpan(Span{Step: "b", Action: "command_run", Status: "success"})
	if got := trace(); got != "" {
		t.Fatalf("held spans written before a process started: %q", got)
	}
	d.procStarted("c-1", os.Getpid(), "")
	got := trace()
	if a, b := strings.Index(got, `"step":"a"`), strings.Index(got, `"step":"b"`); a < 0 || b < a || strings.Count(got, "\n") != 2 {
		t.Fatalf("after the next process started, the trace holds %q", got)
	}
}
