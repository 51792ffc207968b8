package lsp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apl-lang/apl/lang"
)

// A client drives a Server in-process over its stdio protocol: framed
// JSON-RPC written to one pipe, replies and notifications read from the
// other.
type client struct {
	t testing.TB
	// srv is the server, to look into once it has answered a request:
	// its reply orders what it did before after it.
	srv    *Server
	in     *io.PipeWriter
	msgs   chan map[string]any
	done   chan error
	nextID int
	// notes are notifications read while waiting for a reply.
	notes []map[string]any
}

func newClient(t testing.TB, opts Options) *client {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &client{t: t, srv: NewServer(opts), in: inW, msgs: make(chan map[string]any, 100), done: make(chan error, 1)}
	go func() {
		c.done <- c.srv.Serve(inR, outW)
		outW.Close()
	}()
	go func() {
		br := bufio.NewReader(outR)
		for {
			m, err := readMessage(br)
			if err != nil {
				close(c.msgs)
				return
			}
			b, _ := json.Marshal(m)
			var v map[string]any
			json.Unmarshal(b, &v)
			c.msgs <- v
		}
	}()
	t.Cleanup(func() { inW.Close() })
	return c
}

func (c *client) send(v map[string]any) {
	c.t.Helper()
	v["jsonrpc"] = "2.0"
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	fmt.Fprintf(c.in, "Content-Length: %d\r\n\r\n%s", len(b), b)
}

// next is the next message from the server. The wait only guards a
// broken server from hanging the test: no result depends on timing.
func (c *client) next() map[string]any {
	c.t.Helper()
	select {
	case m, ok := <-c.msgs:
		if !ok {
			c.t.Fatal("the server closed its output")
		}
		return m
	case <-time.After(time.Minute):
		c.t.Fatal("no message from the server in a minute")
	}
	return nil
}

func (c *client) request(method string, params any) map[string]any {
	c.t.Helper()
	c.nextID++
	id := c.nextID
	c.send(map[string]any{"id": id, "method": method, "params": params})
	for {
		m := c.next()
		if m["id"] == float64(id) {
			return m
		}
		c.notes = append(c.notes, m)
	}
}

func (c *client) notify(method string, params any) {
	c.t.Helper()
	c.send(map[string]any{"method": method, "params": params})
}

// diagnostics waits for the next diagnostics published for uri.
func (c *client) diagnostics(uri string) []any {
	c.t.Helper()
	for {
		var m map[string]any
		if len(c.notes) > 0 {
			m, c.notes = c.notes[0], c.notes[1:]
		} else {
			m = c.next()
		}
		if m["method"] != "textDocument/publishDiagnostics" {
			continue
		}
		p := m["params"].(map[string]any)
		if p["uri"] == uri {
			return p["diagnostics"].([]any)
		}
	}
}

const demo = `playbook "demo" {
  description = "Démo"
}

input "phase" {
  type        = string
  default     = "6.3"
  description = "The phase to run."
}

agent "rater" {
  type = "general-purpose"
}

step "rate" {
  returns = object({ score = number, notes = optional(string) })
  agent "rater" {
    prompt = "Rate phase ${inputs.phase}; answer {\"score\": 1, \"notes\": \"\"}."
  }
  check "positive" {
    condition = "steps.rate.output.score > 0"
  }
  next = "report"
}

step "report" {
  when = "steps.rate.output.score >= 1"
  shell {
    command = ["echo", "é 😀", steps.rate.output.score]
  }
}
`

// project writes files into a fresh directory and returns it.
func project(t testing.TB, files map[string]string) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func initialized(t testing.TB, root string) *client {
	t.Helper()
	c := newClient(t, Options{Loader: lang.Loader{Root: root}})
	r := c.request("initialize", map[string]any{"capabilities": map[string]any{}})
	if r["error"] != nil {
		t.Fatalf("initialize: %v", r["error"])
	}
	c.notify("initialized", map[string]any{})
	return c
}

func open(c *client, uri, text string) {
	c.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": uri, "languageId": "hcl", "version": 1, "text": text}})
}

// at is the position of the n-th (0-based) occurrence of sub in text,
// plus delta characters, in LSP terms.
func at(text, sub string, n, delta int) map[string]any {
	i := -1
	for ; n >= 0; n-- {
		j := strings.Index(text[i+1:], sub)
		if j < 0 {
			panic("no " + sub)
		}
		i += 1 + j
	}
	p := position([]byte(text), i)
	return map[string]any{"line": p.Line, "character": p.Character + delta}
}

func rangeOf(d any) Range {
	b, _ := json.Marshal(d.(map[string]any)["range"])
	var r Range
	json.Unmarshal(b, &r)
	return r
}

func TestDiagnosticsOnOpenAndChange(t *testing.T) {
	root := project(t, nil)
	c := initialized(t, root)
	uri := pathURI(filepath.Join(root, "main.hcl"))
	broken := strings.Replace(demo, "steps.rate.output.score]", "steps.rat.output.score]", 1)
	open(c, uri, broken)
	ds := c.diagnostics(uri)
	if len(ds) != 1 {
		t.Fatalf("diagnostics after opening a playbook with a typo: %v, want 1", ds)
	}
	msg := ds[0].(map[string]any)["message"].(string)
	if !strings.Contains(msg, `Did you mean "rate"?`) {
		t.Errorf("the diagnostic says %q, want the suggestion", msg)
	}
	// Line 29 holds "é 😀" before the reference: é is one UTF-16 unit
	// and two bytes, 😀 two units and four bytes.
	want := Range{Start: Position{28, 31}, End: Position{28, 31 + len("steps.rat.output.score")}}
	if got := rangeOf(ds[0]); got != want {
		t.Errorf("the diagnostic's range is %+v, want %+v (UTF-16 characters, not bytes)", got, want)
	}
	// The quick fix the suggestion offers.
	r := c.request("textDocument/codeAction", map[string]any{"textDocument": map[string]any{"uri": uri},
		"range": ds[0].(map[string]any)["range"], "context": map[string]any{"diagnostics": ds}})
	acts := r["result"].([]any)
	if len(acts) != 1 {
		t.Fatalf("code actions: %v", r)
	}
	b, _ := json.Marshal(acts[0].(map[string]any)["edit"].(map[string]any)["changes"].(map[string]any)[uri])
	var edits []TextEdit
	json.Unmarshal(b, &edits)
	// "rat" starts after "steps.", 6 characters into the range.
	if want := []TextEdit{{Range{Position{28, 37}, Position{28, 40}}, "rate"}}; fmt.Sprint(edits) != fmt.Sprint(want) {
		t.Errorf("the quick fix's edit is %s, want %v", b, want)
	}
	// The fix, as an incremental edit: insert the "e".
	p := at(broken, "steps.rat.", 0, len("steps.rat"))
	c.notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": 2},
		"contentChanges": []any{map[string]any{"range": map[string]any{"start": p, "end": p}, "text": "e"}},
	})
	if ds := c.diagnostics(uri); len(ds) != 0 {
		t.Errorf("diagnostics after the fix: %v, want none", ds)
	}
}

func TestDiagnosticsInEveryFile(t *testing.T) {
	// The playbook is a directory of two files: the error is in the file
	// that is not open, and must be published for it.
	root := project(t, map[string]string{
		"pb/main.hcl":  strings.Replace(demo, `next = "report"`, `next = "reprt"`, 1),
		"pb/other.hcl": "# nothing here\n",
	})
	c := initialized(t, root)
	other := pathURI(filepath.Join(root, "pb", "other.hcl"))
	main := pathURI(filepath.Join(root, "pb", "main.hcl"))
	open(c, other, "# nothing here\n")
	ds := c.diagnostics(main)
	if len(ds) == 0 || !strings.Contains(ds[0].(map[string]any)["message"].(string), `no step named "reprt"`) {
		t.Fatalf("diagnostics of main.hcl with other.hcl open: %v", ds)
	}
}

func TestHoverDefinitionCompletion(t *testing.T) {
	root := project(t, nil)
	c := initialized(t, root)
	uri := pathURI(filepath.Join(root, "main.hcl"))
	open(c, uri, demo)
	if ds := c.diagnostics(uri); len(ds) != 0 {
		t.Fatalf("diagnostics of a valid playbook: %v", ds)
	}
	hover := func(p map[string]any) string {
		t.Helper()
		r := c.request("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": p})
		res, _ := r["result"].(map[string]any)
		if res == nil {
			return ""
		}
		return res["contents"].(map[string]any)["value"].(string)
	}
	for _, tc := range []struct {
		name string
		pos  map[string]any
		want []string
	}{
		{"step in next", at(demo, `"report"`, 0, 2), []string{"**step** `report`: shell step"}},
		{"step in a condition", at(demo, "steps.rate", 0, 8), []string{"agent step", "agent: `rater`", "- `score`: number", "- `notes`: string (optional)", "positive: `steps.rate.output.score > 0`"}},
		{"output field", at(demo, "score]", 0, 1), []string{"`steps.rate.output.score`: `number`"}},
		{"input", at(demo, "inputs.phase", 0, 8), []string{"**input** `phase`: `string`, default `\"6.3\"`", "The phase to run."}},
		{"agent label", at(demo, `agent "rater"`, 1, 8), []string{"**agent** `rater`", "type: general-purpose"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := hover(tc.pos)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("hover = %q, want it to hold %q", got, w)
				}
			}
		})
	}

	def := func(p map[string]any) Location {
		t.Helper()
		r := c.request("textDocument/definition", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": p})
		b, _ := json.Marshal(r["result"])
		var locs []Location
		json.Unmarshal(b, &locs)
		if len(locs) != 1 {
			t.Fatalf("definition at %v: %s", p, b)
		}
		return locs[0]
	}
	if got := def(at(demo, `"report"`, 0, 3)); got.URI != uri || got.Range.Start.Line != 25 {
		t.Errorf("definition of next's target: %+v, want line 25 (step \"report\")", got)
	}
	if got := def(at(demo, "inputs.phase", 0, 9)); got.Range.Start.Line != 4 {
		t.Errorf("definition of inputs.phase: %+v, want line 4", got)
	}

	complete := func(p map[string]any) []string {
		t.Helper()
		r := c.request("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": p})
		var out []string
		for _, it := range r["result"].([]any) {
			out = append(out, it.(map[string]any)["label"].(string))
		}
		return out
	}
	if got := complete(at(demo, "steps.rate.output.score >= 1", 0, len("steps."))); strings.Join(got, ",") != "rate,report" {
		t.Errorf("completion after steps.: %v", got)
	}
	if got := complete(at(demo, "steps.rate.output.score >= 1", 0, len("steps.rate.output."))); strings.Join(got, ",") != "notes,score" {
		t.Errorf("completion after steps.rate.output.: %v", got)
	}
	if got := complete(at(demo, `"report"`, 0, 1)); strings.Join(got, ",") != "rate,report" {
		t.Errorf("completion in next: %v", got)
	}
}

func TestFunctionHoverFormattingSymbols(t *testing.T) {
	root := project(t, nil)
	c := initialized(t, root)
	uri := pathURI(filepath.Join(root, "main.hcl"))
	text := strings.Replace(demo, `["echo", "é 😀", steps.rate.output.score]`, `["echo", upper("é 😀"),   tostring(steps.rate.output.score)]`, 1)
	open(c, uri, text)
	if ds := c.diagnostics(uri); len(ds) != 0 {
		t.Fatalf("diagnostics: %v", ds)
	}
	r := c.request("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": at(text, "upper(", 0, 2)})
	got := fmt.Sprint(r["result"])
	if !strings.Contains(got, "upper(str string) string") || !strings.Contains(got, "A function of values") {
		t.Errorf("hover on upper: %s", got)
	}

	r = c.request("textDocument/formatting", map[string]any{"textDocument": map[string]any{"uri": uri}, "options": map[string]any{"tabSize": 2, "insertSpaces": true}})
	edits := r["result"].([]any)
	if len(edits) != 1 {
		t.Fatalf("formatting edits: %v", edits)
	}
	want, _ := lang.Format([]byte(text), "main.hcl")
	if got := edits[0].(map[string]any)["newText"]; got != string(want) {
		t.Errorf("formatting gives\n%s\nwant apl fmt's\n%s", got, want)
	}

	r = c.request("textDocument/documentSymbol", map[string]any{"textDocument": map[string]any{"uri": uri}})
	var names []string
	var walk func([]any)
	walk = func(syms []any) {
		for _, s := range syms {
			m := s.(map[string]any)
			names = append(names, m["detail"].(string)+":"+m["name"].(string))
			if c, ok := m["children"].([]any); ok {
				walk(c)
			}
		}
	}
	walk(r["result"].([]any))
	if got := strings.Join(names, " "); got != "playbook:demo input:phase agent:rater step:rate agent:rater check:positive step:report" {
		t.Errorf("symbols: %s", got)
	}
}

func TestTestFileDiagnostics(t *testing.T) {
	// A test file is checked against the playbook beside it, its buffer
	// in place of the disk's.
	root := project(t, map[string]string{"pb/main.hcl": demo})
	c := initialized(t, root)
	uri := pathURI(filepath.Join(root, "pb", "main_test.hcl"))
	open(c, uri, "test \"t\" {\n  expect {\n    path = [\"rate\", \"reprt\"]\n    status = \"completed\"\n  }\n}\n")
	ds := c.diagnostics(uri)
	if len(ds) == 0 || !strings.Contains(fmt.Sprint(ds), "reprt") {
		t.Fatalf("diagnostics of a test file naming no step: %v", ds)
	}
	if r := rangeOf(ds[0]); r.Start.Line != 2 {
		t.Errorf("the diagnostic is on line %d, want 2: %v", r.Start.Line, ds)
	}
	// Go to definition from a mock's label to the step it mocks.
	c.notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": 2},
		"contentChanges": []any{map[string]any{"text": "mock \"rate\" {\n  output = { score = 1 }\n}\n"}}})
	c.diagnostics(uri)
	r := c.request("textDocument/definition", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": map[string]any{"line": 0, "character": 7}})
	b, _ := json.Marshal(r["result"])
	var locs []Location
	json.Unmarshal(b, &locs)
	if len(locs) != 1 || locs[0].URI != pathURI(filepath.Join(root, "pb", "main.hcl")) || locs[0].Range.Start.Line != 14 {
		t.Errorf("definition of a mock's step: %s, want main.hcl line 14", b)
	}
}

func TestBadInputKeepsServing(t *testing.T) {
	root := project(t, nil)
	c := initialized(t, root)
	uri := pathURI(filepath.Join(root, "main.hcl"))
	for _, text := range []string{
		"step \"a\" {\n  next = ",                       // half-typed
		"step \"a\" {\n  description = <<EOT\nno end\n", // an unterminated heredoc
		"\xff\xfe step { ] }",                           // not UTF-8, not HCL
		strings.Repeat("# filler line é\n", 70000),      // over a megabyte
	} {
		open(c, uri, text)
		c.diagnostics(uri)
		for _, m := range []string{"textDocument/hover", "textDocument/definition", "textDocument/completion"} {
			for _, p := range []Position{{0, 0}, {1, 9}, {3, 2}, {99999, 99999}} {
				if r := c.request(m, map[string]any{"textDocument": map[string]any{"uri": uri}, "position": p}); r["error"] != nil {
					t.Errorf("%s at %v on bad input: %v", m, p, r["error"])
				}
			}
		}
		c.request("textDocument/formatting", map[string]any{"textDocument": map[string]any{"uri": uri}})
		c.request("textDocument/documentSymbol", map[string]any{"textDocument": map[string]any{"uri": uri}})
	}

	// Not JSON: a parse error, and the server goes on.
	fmt.Fprintf(c.in, "Content-Length: 9\r\n\r\n{not json")
	if m := c.next(); m["error"].(map[string]any)["code"] != float64(codeParseError) {
		t.Errorf("reply to a body that is not JSON: %v", m)
	}
	if r := c.request("no/such/method", map[string]any{}); r["error"].(map[string]any)["code"] != float64(codeMethodNotFound) {
		t.Errorf("reply to an unknown method: %v", r)
	}
	if r := c.request("textDocument/hover", "not an object"); r["error"].(map[string]any)["code"] != float64(codeInvalidParams) {
		t.Errorf("reply to bad params: %v", r)
	}
	if r := c.request("shutdown", nil); r["error"] != nil {
		t.Errorf("shutdown: %v", r)
	}
	c.notify("exit", nil)
	if err := <-c.done; err != nil {
		t.Errorf("Serve after shutdown and exit: %v", err)
	}
}

// FuzzDidChange applies arbitrary edits to a playbook: the server answers
// every request after them, and never panics.
func FuzzDidChange(f *testing.F) {
	f.Add(0, 0, 0, 0, "x")
	f.Add(28, 31, 28, 40, "é😀\n\"")
	f.Add(2, 0, 30, 0, "<<EOT\n")
	f.Fuzz(func(t *testing.T, sl, sc, el, ec int, text string) {
		root := project(t, nil)
		c := initialized(t, root)
		uri := pathURI(filepath.Join(root, "main.hcl"))
		open(c, uri, demo)
		c.diagnostics(uri)
		c.notify("textDocument/didChange", map[string]any{
			"textDocument": map[string]any{"uri": uri, "version": 2},
			"contentChanges": []any{map[string]any{"range": map[string]any{
				"start": map[string]any{"line": sl, "character": sc}, "end": map[string]any{"line": el, "character": ec}}, "text": text}},
		})
		c.diagnostics(uri)
		for _, m := range []string{"textDocument/hover", "textDocument/definition", "textDocument/completion"} {
			if r := c.request(m, map[string]any{"textDocument": map[string]any{"uri": uri}, "position": map[string]any{"line": sl, "character": sc}}); r["error"] != nil {
				t.Errorf("%s: %v", m, r["error"])
			}
		}
	})
}

const named = `playbook "named" {
  description = "Names of every kind."
}

var "attempts" {
  type    = number
  default = 0
}

locals {
  label = "run ${vars.attempts}"
}

agent "planner" {
  type = "gsd-planner"
}

prompt "plan" {
  template = "Plan ${local.label}; answer {\"tasks\": [{\"id\": \"t1\"}]}."
}

step "plan" {
  returns = object({ tasks = list(object({ id = string })) })
  agent "planner" {
    prompt = prompt.plan
  }
  gate {
    rule "again" {
      when = "vars.attempts < 2 && len(steps.plan.output.tasks) == 0"
      set  = { attempts = vars.attempts + 1 }
      goto = "plan"
      max  = 2
      on_exhausted {
        fail = "no tasks"
      }
    }
    otherwise {}
  }
}
`

func TestDefinitionOfEveryName(t *testing.T) {
	root := project(t, nil)
	c := initialized(t, root)
	uri := pathURI(filepath.Join(root, "main.hcl"))
	open(c, uri, named)
	if ds := c.diagnostics(uri); len(ds) != 0 {
		t.Fatalf("diagnostics: %v", ds)
	}
	line := func(sub string) int { return int(at(named, sub, 0, 0)["line"].(int)) }
	for _, tc := range []struct {
		name string
		pos  map[string]any
		want int
	}{
		{"vars.X", at(named, "vars.attempts <", 0, 6), line(`var "attempts"`)},
		{"local.X", at(named, "local.label", 0, 7), line("label = ")},
		{"prompt.X", at(named, "prompt.plan", 0, 8), line(`prompt "plan"`)},
		{"agent label", at(named, `agent "planner"`, 1, 8), line(`agent "planner"`)},
		{"goto", at(named, `goto = "plan"`, 0, 9), line(`step "plan"`)},
		{"steps.X in a condition", at(named, "steps.plan", 0, 7), line(`step "plan"`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.request("textDocument/definition", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": tc.pos})
			b, _ := json.Marshal(r["result"])
			var locs []Location
			json.Unmarshal(b, &locs)
			if len(locs) != 1 || locs[0].URI != uri || locs[0].Range.Start.Line != tc.want {
				t.Errorf("definition = %s, want line %d", b, tc.want)
			}
		})
	}
	refs := c.request("textDocument/references", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": at(named, `goto = "plan"`, 0, 9),
		"context": map[string]any{"includeDeclaration": true}})
	var lines []string
	for _, l := range refs["result"].([]any) {
		lines = append(lines, fmt.Sprint(rangeOf(l).Start))
	}
	// The step's declaration, steps.plan in the condition and the goto;
	// not prompt "plan", prompt.plan or agent "planner".
	if got, want := strings.Join(lines, " "), fmt.Sprintf("%v %v %v",
		position([]byte(named), strings.Index(named, `step "plan"`)+6),
		position([]byte(named), strings.Index(named, "steps.plan")+6),
		position([]byte(named), strings.Index(named, `goto = "plan"`)+8)); got != want {
		t.Errorf("references of step plan: %s, want %s", got, want)
	}
	r := c.request("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": at(named, "prompt.plan", 0, 8)})
	if got := fmt.Sprint(r["result"]); !strings.Contains(got, "reads: `local.label`") || !strings.Contains(got, `Plan ${local.label}`) {
		t.Errorf("hover on prompt.plan: %s", got)
	}
	complete := func(p map[string]any) string {
		r := c.request("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": p})
		var out []string
		for _, it := range r["result"].([]any) {
			out = append(out, it.(map[string]any)["label"].(string))
		}
		return strings.Join(out, ",")
	}
	if got := complete(at(named, "vars.attempts <", 0, 5)); got != "attempts" {
		t.Errorf("completion after vars.: %s", got)
	}
	labels := complete(at(named, "vars.attempts <", 0, 2))
	if !strings.Contains(","+labels+",", ",len,") || strings.Contains(","+labels+",", ",try,") {
		t.Errorf("completion in a condition offers expr's functions, not HCL's: %s", labels)
	}
	labels = complete(at(named, "vars.attempts + 1", 0, 2))
	if strings.Contains(","+labels+",", ",len,") || !strings.Contains(","+labels+",", ",try,") {
		t.Errorf("completion in a value offers HCL's functions, not expr's: %s", labels)
	}
	if got := complete(at(named, "local.label", 0, 6)); got != "label" {
		t.Errorf("completion after local.: %s", got)
	}
	if got := complete(at(named, "steps.plan.output.tasks)", 0, len("steps.plan.output."))); got != "tasks" {
		t.Errorf("completion after steps.plan.output.: %s", got)
	}
}

func TestExtendsDiagnosticsInTheUpstream(t *testing.T) {
	// The fork is open; the upstream, beside it in the project, has the
	// error: it is published for the upstream's file.
	up := strings.Replace(demo, `next = "report"`, `next = "reprt"`, 1)
	root := project(t, map[string]string{
		"upstream/main.hcl": up,
		"fork/main.hcl":     "extends = \"../upstream\"\n\nplaybook \"fork\" {\n  description = \"A fork.\"\n}\n",
	})
	c := initialized(t, root)
	fork := pathURI(filepath.Join(root, "fork", "main.hcl"))
	upURI := pathURI(filepath.Join(root, "upstream", "main.hcl"))
	open(c, fork, "extends = \"../upstream\"\n\nplaybook \"fork\" {\n  description = \"A fork.\"\n}\n")
	ds := c.diagnostics(upURI)
	if len(ds) == 0 || !strings.Contains(fmt.Sprint(ds), `no step named "reprt"`) {
		t.Fatalf("diagnostics of the upstream: %v", ds)
	}
	if r := rangeOf(ds[0]); r.Start.Line != 22 {
		t.Errorf("the upstream's diagnostic is on line %d, want 22", r.Start.Line)
	}
	r := c.request("textDocument/definition", map[string]any{"textDocument": map[string]any{"uri": fork}, "position": map[string]any{"line": 0, "character": 14}})
	if got := fmt.Sprint(r["result"]); !strings.Contains(got, upURI) {
		t.Errorf("definition of extends: %s, want %s", got, upURI)
	}
	// An attribute the fork overrides says what it overrides.
	over := "extends = \"../upstream\"\n\nstep \"report\" {\n  when = \"steps.rate.output.score >= 2\"\n}\n"
	open(c, fork, over)
	c.diagnostics(fork)
	r = c.request("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": fork}, "position": map[string]any{"line": 3, "character": 3}})
	if got := fmt.Sprint(r["result"]); !strings.Contains(got, "`step.report.when` overrides") || !strings.Contains(got, `when = "steps.rate.output.score >= 1"`) || !strings.Contains(got, filepath.Join("upstream", "main.hcl")) {
		t.Errorf("hover on an overriding attribute: %s", got)
	}
	// What the server published before the hover's reply is of the
	// override; the next publication is of what follows.
	c.notes = nil
	// The upstream opened and fixed in the editor, unsaved: cleared.
	open(c, upURI, demo)
	if ds := c.diagnostics(upURI); len(ds) != 0 {
		t.Errorf("diagnostics of the fixed upstream: %v", ds)
	}
}

func TestNothingReadOutsideTheProject(t *testing.T) {
	// A playbook file beside the open one is a symlink out of the
	// project, and the open one extends a file out of it: the server
	// reads neither, and quotes neither.
	outside := project(t, map[string]string{"secret.hcl": "SECRET-LINE-42 {\n"})
	root := project(t, nil)
	if err := os.Symlink(filepath.Join(outside, "secret.hcl"), filepath.Join(root, "evil.hcl")); err != nil {
		t.Fatal(err)
	}
	c := initialized(t, root)
	uri := pathURI(filepath.Join(root, "main.hcl"))
	open(c, uri, "extends = \""+filepath.Join(outside, "secret.hcl")+"\"\n"+named)
	var all []any
	all = append(all, c.diagnostics(uri)...)
	if got := fmt.Sprint(all); strings.Contains(got, "SECRET") {
		t.Errorf("a diagnostic quotes a file outside the project: %s", got)
	} else if !strings.Contains(got, "outside") && !strings.Contains(got, "project") {
		t.Errorf("the extends out of the project is not refused: %s", got)
	}
}

func TestCloseClearsAndOthersStay(t *testing.T) {
	// Two playbooks open, each with a problem: an edit in one leaves the
	// other's alone, and closing one clears its diagnostics.
	root := project(t, nil)
	c := initialized(t, root)
	a := pathURI(filepath.Join(root, "a", "main.hcl"))
	b := pathURI(filepath.Join(root, "b", "main.hcl"))
	broken := strings.Replace(demo, `next = "report"`, `next = "reprt"`, 1)
	open(c, a, broken)
	if ds := c.diagnostics(a); len(ds) == 0 {
		t.Fatal("no diagnostics for a")
	}
	open(c, b, broken)
	if ds := c.diagnostics(b); len(ds) == 0 {
		t.Fatal("no diagnostics for b")
	}
	c.notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": a}})
	if ds := c.diagnostics(a); len(ds) != 0 {
		t.Errorf("diagnostics of a after it closed: %v", ds)
	}
	// b still has its problem: a request answers after the server has
	// published all it had to, and nothing cleared b.
	c.request("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": b}, "position": map[string]any{"line": 0, "character": 0}})
	for _, m := range c.notes {
		if p, _ := m["params"].(map[string]any); p != nil && p["uri"] == b {
			t.Errorf("b's diagnostics were published again after a closed: %v", p)
		}
	}
}

func TestPromptFileDiagnostics(t *testing.T) {
	// Only the prompt file is open: its playbook is the one of the
	// directory above, loaded with the buffer, and the problem is
	// published for the prompt file.
	pb := strings.Replace(demo, `prompt = "Rate phase ${inputs.phase}; answer {\"score\": 1, \"notes\": \"\"}."`, `prompt = file("prompts/rate.md")`, 1)
	root := project(t, map[string]string{"pb/main.hcl": pb, "pb/prompts/rate.md": "Rate it; answer {\"score\": 1}.\n"})
	c := initialized(t, root)
	uri := pathURI(filepath.Join(root, "pb", "prompts", "rate.md"))
	open(c, uri, "Rate ${inputs.phaze}; answer {\"score\": 1}.\n")
	ds := c.diagnostics(uri)
	if len(ds) == 0 || !strings.Contains(fmt.Sprint(ds), "phaze") {
		t.Fatalf("diagnostics of a prompt file with a typo: %v", ds)
	}
	if r := rangeOf(ds[0]); r.Start != (Position{0, 7}) {
		t.Errorf("the diagnostic starts at %+v, want 0:7", r.Start)
	}
}
