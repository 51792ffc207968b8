package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// countingDriver answers each call with its prompt and a call number.
type countingDriver struct {
	mu sync.Mutex
	n  int
}

func (d *countingDriver) Call(ctx context.Context, req Request) (Response, error) {
	d.mu.Lock()
	d.n++
	n := d.n
	d.mu.Unlock()
	if strings.Contains(req.Prompt, "fail") {
		return Response{}, errors.New("inner failure")
	}
	return Response{
		Text:       fmt.Sprintf("answer %d to %s", n, req.Prompt),
		Structured: json.RawMessage(fmt.Sprintf(`{"n": %d}`, n)),
		SessionID:  fmt.Sprintf("s-%d", n),
		Usage:      Usage{InputTokens: n, OutputTokens: 2 * n, CacheReadTokens: 3},
		CostUSD:    ptr(float64(n) / 100),
		Raw:        []byte(fmt.Sprintf("raw %d", n)),
	}, nil
}

func (d *countingDriver) calls() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.n
}

func newCassette(t *testing.T, inner Driver, path, mode string) Driver {
	t.Helper()
	c, err := NewCassette(inner, path, mode)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCassetteRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "calls.jsonl")
	inner := &countingDriver{}
	rec := newCassette(t, inner, path, CassetteRecord)
	reqs := []Request{
		{Step: "plan", Agent: "gsd-planner", Prompt: "same", RunID: "r1", Attempt: 1},
		{Step: "plan", Agent: "gsd-planner", Prompt: "same", RunID: "r1", Attempt: 2},
		{Step: "verify", Agent: "gsd-verifier", Prompt: "other", Schema: map[string]any{"type": "object"}},
		{Step: "plan", Agent: "gsd-planner", Prompt: "same", RunID: "r1", Attempt: 3},
	}
	var recorded []Response
	for _, r := range reqs {
		resp, err := rec.Call(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		recorded = append(recorded, resp)
	}

	// Replay in another run: run id, attempt and workdir differ.
	rep := newCassette(t, nil, path, CassetteReplay)
	for i, r := range reqs {
		r.RunID, r.Workdir, r.Attempt = "r2", "/elsewhere", r.Attempt+10
		got, err := rep.Call(context.Background(), r)
		if err != nil {
			t.Fatalf("replay %d: %v", i, err)
		}
		if diff := cmp.Diff(recorded[i], got); diff != "" {
			t.Errorf("replay %d (-recorded +replayed):\n%s", i, diff)
		}
	}
	// Repeated identical calls were numbered in order.
	for i, idx := range []int{0, 1, 3} {
		if want := fmt.Sprintf("answer %d to same", idx+1); recorded[idx].Text != want {
			t.Errorf("identical call %d recorded %q, want %q", i, recorded[idx].Text, want)
		}
	}
	// The recording is the inner driver's answer, structured compacted.
	if recorded[0].Text != "answer 1 to same" || string(recorded[0].Structured) != `{"n":1}` || string(recorded[0].Raw) != "raw 1" {
		t.Errorf("recorded[0] = %+v", recorded[0])
	}
	if inner.calls() != 4 {
		t.Errorf("inner called %d times, want 4", inner.calls())
	}

	// One more identical call than was recorded is a miss naming key and step.
	_, err := rep.Call(context.Background(), reqs[0])
	key, _ := CassetteKey(CassetteRequest{Step: "plan", Agent: "gsd-planner", Prompt: "same"})
	if !errors.Is(err, ErrCassetteMiss) || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), `step "plan"`) {
		t.Errorf("miss error = %v, want one naming key %s and the step", err, key)
	}
}

func TestCassetteLineShape(t *testing.T) {
	path := filepath.Join(t.TempDir(), "calls.jsonl")
	rec := newCassette(t, &countingDriver{}, path, CassetteRecord)
	req := Request{Step: "rate", Agent: "general-purpose", Model: "sonnet", Prompt: "p", System: "s", RunID: "r", ItemKey: "k"}
	if _, err := rec.Call(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var line map[string]any
	if err := json.Unmarshal(data, &line); err != nil {
		t.Fatalf("line %q: %v", data, err)
	}
	key, _ := CassetteKey(CassetteRequest{Step: "rate", Agent: "general-purpose", Model: "sonnet", Prompt: "p", System: "s"})
	want := map[string]any{
		"key": key, "seq": float64(0),
		"request": map[string]any{"step": "rate", "agent": "general-purpose", "model": "sonnet", "prompt": "p", "system": "s"},
		"response": map[string]any{
			"text": "answer 1 to p", "structured": map[string]any{"n": float64(1)}, "session_id": "s-1",
			"usage":    map[string]any{"input_tokens": float64(1), "output_tokens": float64(2), "cache_read_tokens": float64(3)},
			"cost_usd": 0.01, "raw": "raw 1",
		},
	}
	if diff := cmp.Diff(want, line); diff != "" {
		t.Errorf("line (-want +got):\n%s", diff)
	}
}

func TestCassetteRecordMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "calls.jsonl")
	inner := &countingDriver{}
	first := newCassette(t, inner, path, CassetteRecordMissing)
	a1, _ := first.Call(context.Background(), Request{Step: "a", Prompt: "x"})

	second := newCassette(t, inner, path, CassetteRecordMissing)
	b1, _ := second.Call(context.Background(), Request{Step: "a", Prompt: "x"}) // hit
	b2, _ := second.Call(context.Background(), Request{Step: "a", Prompt: "x"}) // miss: seq 1
	if diff := cmp.Diff(a1, b1); diff != "" {
		t.Errorf("hit differs (-first +second):\n%s", diff)
	}
	if inner.calls() != 2 || b2.Text != "answer 2 to x" {
		t.Errorf("inner calls = %d, b2 = %q", inner.calls(), b2.Text)
	}
	rep := newCassette(t, nil, path, CassetteReplay)
	for i, want := range []Response{a1, b2} {
		got, err := rep.Call(context.Background(), Request{Step: "a", Prompt: "x"})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("replay %d (-want +got):\n%s", i, diff)
		}
	}
}

func TestCassetteRecordAppendsAfterExisting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "calls.jsonl")
	inner := &countingDriver{}
	newCassette(t, inner, path, CassetteRecord).Call(context.Background(), Request{Step: "a", Prompt: "x"})
	newCassette(t, inner, path, CassetteRecord).Call(context.Background(), Request{Step: "a", Prompt: "x"})
	rep := newCassette(t, nil, path, CassetteReplay)
	for _, want := range []string{"answer 1 to x", "answer 2 to x"} {
		got, err := rep.Call(context.Background(), Request{Step: "a", Prompt: "x"})
		if err != nil || got.Text != want {
			t.Errorf("replay = %q, %v; want %q", got.Text, err, want)
		}
	}
}

func TestCassetteScrubsSecrets(t *testing.T) {
	t.Setenv("APL_TEST_API_KEY", `sk-"quoted"-secret`)
	t.Setenv("GITHUB_TOKEN", "ghp_abcdefghijklmnop")
	t.Setenv("SHORT_KEY", "abc") // too short to scrub
	path := filepath.Join(t.TempDir(), "calls.jsonl")
	inner := driverFunc(func(ctx context.Context, req Request) (Response, error) {
		return Response{Text: `key sk-"quoted"-secret and ghp_abcdefghijklmnop`, Raw: []byte("ghp_abcdefghijklmnop")}, nil
	})
	rec := newCassette(t, inner, path, CassetteRecord)
	if _, err := rec.Call(context.Background(), Request{Step: "s", Prompt: "use ghp_abcdefghijklmnop abc"}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	for _, secret := range []string{"sk-", "quoted", "ghp_"} {
		if strings.Contains(string(data), secret) {
			t.Errorf("cassette holds %q:\n%s", secret, data)
		}
	}
	if !strings.Contains(string(data), "[REDACTED]") || !strings.Contains(string(data), " abc") {
		t.Errorf("cassette = %s", data)
	}
	// The key still matches the unscrubbed request, so replay finds it.
	rep := newCassette(t, nil, path, CassetteReplay)
	if _, err := rep.Call(context.Background(), Request{Step: "s", Prompt: "use ghp_abcdefghijklmnop abc"}); err != nil {
		t.Errorf("replay: %v", err)
	}
}

func TestCassetteConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "calls.jsonl")
	rec := newCassette(t, &countingDriver{}, path, CassetteRecord)
	var wg sync.WaitGroup
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			rec.Call(context.Background(), Request{Step: "s", Prompt: fmt.Sprintf("p%d", i%4)})
		}(i)
	}
	wg.Wait()
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 40 {
		t.Fatalf("%d lines, want 40", len(lines))
	}
	seqs := map[string]map[float64]bool{}
	for _, l := range lines {
		var e struct {
			Key string
			Seq float64
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("torn line %q: %v", l, err)
		}
		if seqs[e.Key] == nil {
			seqs[e.Key] = map[float64]bool{}
		}
		if seqs[e.Key][e.Seq] {
			t.Errorf("key %s seq %v twice", e.Key, e.Seq)
		}
		seqs[e.Key][e.Seq] = true
	}
	for k, s := range seqs {
		if len(s) != 10 || !s[0] || !s[9] {
			t.Errorf("key %s has seqs %v, want 0..9", k, s)
		}
	}
}

func TestCassetteErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte("{\"key\":\"k\",\"seq\":0}\nnot json\n"), 0o600)
	tests := []struct {
		name  string
		inner Driver
		path  string
		mode  string
		want  string
	}{
		{"unknown mode", nil, bad, "playback", `unknown mode "playback"`},
		{"record needs a driver", nil, bad, CassetteRecord, "needs a driver"},
		{"replay needs the file", nil, filepath.Join(dir, "missing.jsonl"), CassetteReplay, "no such file"},
		{"malformed line", nil, bad, CassetteReplay, "bad.jsonl:2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewCassette(tt.inner, tt.path, tt.mode)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want one containing %q", err, tt.want)
			}
		})
	}
	// A failed inner call is returned and not recorded.
	path := filepath.Join(dir, "fail.jsonl")
	rec := newCassette(t, &countingDriver{}, path, CassetteRecord)
	if _, err := rec.Call(context.Background(), Request{Prompt: "fail"}); err == nil {
		t.Error("failure was swallowed")
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("failed call was recorded: %v", err)
	}
}

// driverFunc adapts a function to Driver.
type driverFunc func(ctx context.Context, req Request) (Response, error)

func (f driverFunc) Call(ctx context.Context, req Request) (Response, error) { return f(ctx, req) }

// One cassette wrapping many drivers numbers the calls once per key, and
// a replay through it needs none of them.
func TestCassetteWrapSharesNumbering(t *testing.T) {
	path := filepath.Join(t.TempDir(), "calls.jsonl")
	tape, err := OpenCassette(path, CassetteRecord)
	if err != nil {
		t.Fatal(err)
	}
	a, b := &countingDriver{}, &countingDriver{}
	req := Request{Step: "s", Agent: "x", Prompt: "same"}
	for _, d := range []Driver{tape.Wrap(a), tape.Wrap(b), tape.Wrap(a)} {
		if _, err := d.Call(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	if a.calls() != 2 || b.calls() != 1 {
		t.Errorf("calls = %d, %d; want 2, 1", a.calls(), b.calls())
	}
	rep, err := OpenCassette(path, CassetteReplay)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for range 3 {
		resp, err := rep.Wrap(nil).Call(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, resp.Text)
	}
	want := []string{"answer 1 to same", "answer 1 to same", "answer 2 to same"}
	if diff := cmp.Diff(want, texts); diff != "" {
		t.Errorf("replayed texts (-want +got):\n%s", diff)
	}
	if _, err := rep.Wrap(nil).Call(context.Background(), req); !errors.Is(err, ErrCassetteMiss) {
		t.Errorf("fourth call: err = %v, want a miss", err)
	}
}

// ReadCassette replays a cassette's contents without its file, as a
// Temporal workflow does, numbering repeated calls as a file's cassette.
func TestReadCassette(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.jsonl")
	rec := newCassette(t, &countingDriver{}, path, CassetteRecord)
	for range 2 {
		if _, err := rec.Call(context.Background(), Request{Step: "s", Prompt: "p"}); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ReadCassette("from-memory", data)
	if err != nil {
		t.Fatal(err)
	}
	d := c.Wrap(nil)
	var texts []string
	for range 2 {
		r, err := d.Call(context.Background(), Request{Step: "s", Prompt: "p"})
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, r.Text)
	}
	if want := []string{"answer 1 to p", "answer 2 to p"}; !slices.Equal(texts, want) {
		t.Errorf("replayed %q, want the recordings in order %q", texts, want)
	}
	if _, err := d.Call(context.Background(), Request{Step: "s", Prompt: "p"}); err == nil || !strings.Contains(err.Error(), "cassette from-memory") || !errors.Is(err, ErrCassetteMiss) {
		t.Errorf("third call: %v, want a miss naming the cassette", err)
	}
	if _, err := ReadCassette("bad", []byte("not json\n")); err == nil || !strings.Contains(err.Error(), "cassette bad:1") {
		t.Errorf("malformed: %v", err)
	}
}
