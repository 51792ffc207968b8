package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// fieldNames are the keys Config.Fields may map.
var fieldNames = []string{"text", "structured", "session_id", "input_tokens", "output_tokens", "cost_usd", "model", "error"}

// commandDriver runs a CLI agent: the generic command driver, and, with
// their hooks set, the claude-code, codex and gemini presets.
type commandDriver struct {
	kind   string   // the driver type, for messages
	argv   []string // the argv template
	input  string
	output string
	fields map[string]string
	cfg    Config
	runner Runner
	// ownSystem is set when the preset passes the system prompt itself;
	// otherwise it is put before the prompt.
	ownSystem bool
	// flags appends a preset's own arguments and may change stdin; nil for
	// the generic driver.
	flags func(c *call) error
	// parse reads a preset's output; nil means the generic output modes.
	parse func(c *call, res ProcessResult) (Response, error)
	// killed reads what a preset printed before it was killed at its
	// timeout: the session it had started and a clause saying what it was
	// doing ("claude was retrying the API: …"), for the timeout message.
	// nil: the last line of stderr serves.
	killed func(res ProcessResult) (sessionID, doing string)
	// watch reads one line of a preset's stdout as it is printed, for
	// the Request's Progress; nil: the preset says nothing while it runs.
	watch func(req Request, line []byte)
	// env is the preset's own environment, under the driver's Env.
	env map[string]string
}

// call is the state of one Call: what the hooks read and write.
type call struct {
	req    Request
	model  string
	prompt string // the prompt with any system prompt folded in
	argv   []string
	stdin  *string // nil: an empty stdin
	dir    string  // temporary directory, made on first use
	schema string  // path of the schema file, once written
	// prior is, for a resumed codex thread, its token total before this
	// call, which codex's running total includes.
	prior *Usage
	// owned: the result's Stdout was read back from the raw file and
	// nothing else holds it, so text can view it without a copy.
	owned bool
}

// text is stdout as a string: a view of it when the call owns it, else a
// copy.
func (c *call) text(stdout []byte) string {
	if c.owned {
		return viewString(stdout)
	}
	return string(stdout)
}

func newCommand(cfg Config) (Driver, error) {
	if len(cfg.Command) == 0 || cfg.Command[0] == "" {
		return nil, errors.New("driver command: command is not set")
	}
	d, err := baseCommand(cfg, cfg.Command)
	if err != nil {
		return nil, err
	}
	if !slices.Contains([]string{"", "stdin", "file", "arg"}, cfg.Input) {
		return nil, fmt.Errorf("driver command: input %q is not one of stdin, file, arg", cfg.Input)
	}
	if !slices.Contains([]string{"", "text", "json", "jsonl"}, cfg.Output) {
		return nil, fmt.Errorf("driver command: output %q is not one of text, json, jsonl", cfg.Output)
	}
	for _, k := range slices.Sorted(maps.Keys(cfg.Fields)) {
		if !slices.Contains(fieldNames, k) {
			return nil, fmt.Errorf("driver command: unknown field %q (known: %s)", k, strings.Join(fieldNames, ", "))
		}
	}
	if len(cfg.Fields) > 0 && (cfg.Output == "" || cfg.Output == "text") {
		return nil, errors.New("driver command: fields need output = \"json\" or \"jsonl\"")
	}
	if err := checkOptions(cfg); err != nil {
		return nil, err
	}
	d.input, d.output, d.fields = cfg.Input, cfg.Output, cfg.Fields
	return d, nil
}

// baseCommand builds the parts every CLI driver shares; def is the argv
// template used when cfg.Command is empty.
func baseCommand(cfg Config, def []string) (*commandDriver, error) {
	argv := cfg.Command
	if len(argv) == 0 {
		argv = def
	}
	if cfg.Type != TypeCommand && (cfg.Input != "" || cfg.Output != "" || len(cfg.Fields) > 0) {
		return nil, fmt.Errorf("driver %s: input, output and fields are fixed by the preset", cfg.Type)
	}
	if cfg.BaseURL != "" || cfg.APIKeyEnv != "" {
		return nil, fmt.Errorf("driver %s: base_url and api_key_env are for the HTTP drivers", cfg.Type)
	}
	runner := cfg.Runner
	if runner == nil {
		runner = ExecRunner{}
	}
	return &commandDriver{kind: cfg.Type, argv: argv, cfg: cfg, runner: runner}, nil
}

// Call runs the command once.
func (d *commandDriver) Call(ctx context.Context, req Request) (Response, error) {
	limit := timeout(req, d.cfg.Timeout, DefaultCLITimeout)
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()

	c := &call{req: req, model: model(req, d.cfg.Model), prompt: req.Prompt}
	defer c.cleanup()
	usesSystem := false
	for _, tok := range d.argv {
		usesSystem = usesSystem || strings.Contains(tok, "{system}")
	}
	if req.System != "" && !usesSystem && !d.ownSystem {
		c.prompt = req.System + "\n\n" + req.Prompt
	}
	if err := d.render(c); err != nil {
		return Response{}, err
	}
	if d.flags != nil {
		if err := d.flags(c); err != nil {
			return Response{}, err
		}
	}

	p := Process{Argv: c.argv, Dir: req.Workdir, Env: d.environ(req), Started: req.Started}
	if c.stdin != nil {
		p.Stdin = strings.NewReader(*c.stdin)
	}
	if d.watch != nil && req.Progress != nil {
		p.Watch = &lineWatcher{fn: func(line []byte) { d.watch(req, line) }}
	}
	var sink *rawSink
	if req.RawFile != "" {
		// A file that cannot be made is no reason to fail the call:
		// stdout is then kept in Raw, as without one.
		if s, err := openRaw(req.RawFile); err == nil {
			sink = s
			p.Stdout = sink.f
		}
	}
	res, err := d.runner.Run(ctx, p)
	if sink != nil {
		var serr error
		if res.Stdout, serr = sink.finish(res.Stdout); serr != nil && err == nil {
			err = serr
		}
		c.owned = true
	}
	if err != nil {
		partial := Response{Raw: res.Stdout, Stderr: res.Stderr}
		if sink != nil {
			partial.Raw, partial.RawFile = nil, sink.path
		}
		doing := lastLine(string(res.Stderr))
		if d.killed != nil {
			// Killed at its timeout or interrupted, the program may
			// have named its session: a resumed step continues it.
			partial.SessionID, doing = d.killed(res)
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			if doing != "" {
				doing = "; " + redactor(d.cfg.Env).String(doing)
			}
			return partial, fmt.Errorf("driver %s: %w after %s (process group killed)%s", d.kind, ErrTimeout, limit, doing)
		}
		return partial, fmt.Errorf("driver %s: %w", d.kind, err)
	}
	var resp Response
	if d.parse != nil {
		resp, err = d.parse(c, res)
	} else {
		resp, err = d.parseGeneric(c, res)
	}
	resp.Raw, resp.Stderr = res.Stdout, res.Stderr
	if sink != nil {
		resp.Raw, resp.RawFile = nil, sink.path
	}
	if resp.CostUSD == nil {
		resp.CostUSD = cost(d.cfg.Prices, c.model, resp.Usage)
	}
	return resp, err
}

// render fills the placeholders of the argv template and sets stdin per the
// input mode.
func (d *commandDriver) render(c *call) error {
	needFile := d.input == "file"
	for _, tok := range d.argv {
		needFile = needFile || strings.Contains(tok, "{prompt_file}")
	}
	vals := map[string]string{
		"model": c.model, "prompt": c.prompt, "session_id": c.req.SessionID,
		"step": c.req.Step, "agent": c.req.Agent, "workdir": c.req.Workdir,
		"system": c.req.System,
	}
	if needFile {
		path, err := c.writeFile("prompt.md", []byte(c.prompt))
		if err != nil {
			return err
		}
		vals["prompt_file"] = path
	}
	if c.req.Schema != nil {
		for _, tok := range d.argv {
			if strings.Contains(tok, "{schema_file}") {
				path, err := c.schemaFile()
				if err != nil {
					return err
				}
				vals["schema_file"] = path
				break
			}
		}
	}
	promptInArgv := false
	for _, tok := range d.argv {
		out := placeholder.ReplaceAllStringFunc(tok, func(m string) string {
			return vals[m[1:len(m)-1]]
		})
		promptInArgv = promptInArgv || strings.Contains(tok, "{prompt}")
		if out == "" && placeholder.FindString(tok) == tok {
			continue // a lone optional placeholder with no value
		}
		c.argv = append(c.argv, out)
	}
	if len(c.argv) == 0 {
		return fmt.Errorf("driver %s: command renders to nothing", d.kind)
	}
	switch d.input {
	case "", "stdin":
		c.stdin = &c.prompt
	case "arg":
		if !promptInArgv {
			c.argv = append(c.argv, c.prompt)
		}
	}
	return nil
}

// placeholder matches the argv placeholders; other braces are left alone.
var placeholder = regexp.MustCompile(`\{(model|prompt|prompt_file|session_id|step|agent|workdir|schema_file|system)\}`)

// environ is the process environment: the preset's defaults, ours, the
// driver's Env, then the APL_* contract variables, which win.
func (d *commandDriver) environ(req Request) []string {
	// The preset's defaults come first, so that apl's own environment and
	// the driver's Env override them.
	var env []string
	for _, k := range slices.Sorted(maps.Keys(d.env)) {
		env = append(env, k+"="+d.env[k])
	}
	env = append(env, os.Environ()...)
	for _, k := range slices.Sorted(maps.Keys(d.cfg.Env)) {
		env = append(env, k+"="+d.cfg.Env[k])
	}
	return append(env,
		"APL_STEP="+req.Step,
		"APL_AGENT="+req.Agent,
		"APL_ATTEMPT="+strconv.Itoa(req.Attempt),
		"APL_RUN_ID="+req.RunID,
		"APL_ITEM_KEY="+req.ItemKey,
		"APL_WORKDIR="+req.Workdir,
	)
}

// lastLine returns a clause quoting the last non-blank line of s, cut
// short: what a killed program said last. Empty when s is blank.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if last == "" {
		return ""
	}
	return "its last line on stderr was: " + excerpt(last, 300)
}

// exitError describes a non-zero exit, with the start of stderr (or of
// stdout when stderr is empty), secrets redacted.
func (d *commandDriver) exitError(argv0 string, res ProcessResult) error {
	out, from := res.Stderr, "stderr"
	if len(strings.TrimSpace(string(out))) == 0 {
		out, from = res.Stdout, "stdout"
	}
	msg := redactor(d.cfg.Env).String(excerpt(string(out), 500))
	if msg == "" {
		return &ExitError{res.ExitCode, fmt.Errorf("driver %s: %s exited with status %d and no output", d.kind, argv0, res.ExitCode)}
	}
	return &ExitError{res.ExitCode, fmt.Errorf("driver %s: %s exited with status %d: %s: %s", d.kind, argv0, res.ExitCode, from, msg)}
}

// parseGeneric reads stdout per the output mode. A non-zero exit is a
// failure, but what the output reports (usage, session) is still returned.
func (d *commandDriver) parseGeneric(c *call, res ProcessResult) (Response, error) {
	var exitErr error
	if res.ExitCode != 0 {
		exitErr = d.exitError(d.argv[0], res)
	}
	if d.output == "" || d.output == "text" {
		return Response{Text: c.text(res.Stdout), RawIsText: true}, exitErr
	}
	found := map[string]json.RawMessage{}
	lines := [][]byte{res.Stdout}
	if d.output == "jsonl" {
		lines = bytes.Split(res.Stdout, []byte("\n"))
	}
	parsed := false
	for _, line := range lines {
		var obj any
		if json.Unmarshal(line, &obj) != nil {
			continue // progress noise between the events
		}
		parsed = true
		for _, name := range fieldNames {
			if v, ok := lookup(obj, d.field(name)); ok {
				found[name] = v
			}
		}
	}
	if !parsed {
		if exitErr != nil {
			return Response{}, exitErr
		}
		return Response{}, fmt.Errorf("driver %s: output is not %s: %s", d.kind, d.output, excerpt(string(res.Stdout), 200))
	}
	resp, err := fieldsResponse(found)
	if _, ok := found["text"]; !ok {
		resp.Text = c.text(res.Stdout) // no text field: the output is the answer
		resp.RawIsText = true
	}
	if exitErr != nil {
		return resp, exitErr
	}
	if err != nil {
		return resp, fmt.Errorf("driver %s: %w", d.kind, err)
	}
	return resp, nil
}

// field returns the dotted path of a field, by default its own name (and
// usage.input_tokens / usage.output_tokens for the token counts).
func (d *commandDriver) field(name string) string {
	if p, ok := d.fields[name]; ok {
		return p
	}
	switch name {
	case "input_tokens", "output_tokens":
		return "usage." + name
	}
	return name
}

// fieldsResponse builds a Response from the values found at the field
// paths; a non-empty error field is the agent's failure.
func fieldsResponse(found map[string]json.RawMessage) (Response, error) {
	var r Response
	if v, ok := found["text"]; ok {
		var s string
		if json.Unmarshal(v, &s) == nil {
			r.Text = s
		} else {
			r.Text = string(v)
		}
	}
	if v, ok := found["structured"]; ok && string(v) != "null" {
		r.Structured = v
	}
	if v, ok := found["session_id"]; ok {
		_ = json.Unmarshal(v, &r.SessionID)
	}
	if v, ok := found["input_tokens"]; ok {
		_ = json.Unmarshal(v, &r.Usage.InputTokens)
	}
	if v, ok := found["output_tokens"]; ok {
		_ = json.Unmarshal(v, &r.Usage.OutputTokens)
	}
	if v, ok := found["model"]; ok {
		_ = json.Unmarshal(v, &r.Model)
	}
	if v, ok := found["cost_usd"]; ok {
		var c float64
		if json.Unmarshal(v, &c) == nil {
			r.CostUSD = &c
		}
	}
	if v, ok := found["error"]; ok {
		switch string(v) {
		case "null", "false", `""`, "{}", "[]":
		default:
			var s string
			if json.Unmarshal(v, &s) != nil {
				s = string(v)
			}
			return r, fmt.Errorf("agent reported an error: %s", excerpt(s, 500))
		}
	}
	return r, nil
}

// lookup follows a dotted path ("usage.input_tokens", "items.0.text") into
// a decoded JSON value.
func lookup(v any, path string) (json.RawMessage, bool) {
	if path == "" {
		return nil, false
	}
	for _, part := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			next, ok := x[part]
			if !ok {
				return nil, false
			}
			v = next
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	raw, err := json.Marshal(v)
	return raw, err == nil
}

// writeFile writes a file into the call's temporary directory.
func (c *call) writeFile(name string, data []byte) (string, error) {
	if c.dir == "" {
		dir, err := os.MkdirTemp("", "apl-agent-")
		if err != nil {
			return "", err
		}
		c.dir = dir
	}
	path := filepath.Join(c.dir, name)
	return path, os.WriteFile(path, data, 0o600)
}

// schemaFile writes the request's schema to a file once and returns its
// path.
func (c *call) schemaFile() (string, error) {
	if c.schema != "" {
		return c.schema, nil
	}
	data, err := json.Marshal(c.req.Schema)
	if err != nil {
		return "", fmt.Errorf("schema: %w", err)
	}
	c.schema, err = c.writeFile("schema.json", data)
	return c.schema, err
}

func (c *call) cleanup() {
	if c.dir != "" {
		os.RemoveAll(c.dir)
	}
}
