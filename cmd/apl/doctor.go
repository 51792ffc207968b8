package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/interp"
)

type doctorCmd struct {
	Path string `arg:"" optional:"" help:"A playbook file, directory, or stdlib:NAME whose drivers to check; default: every preset."`
	Call bool   `help:"Also make one tiny call through each driver (it costs money)."`
	JSON bool   `name:"json" help:"Print the report as JSON."`
}

// doctorCheck is what apl doctor found about one driver.
type doctorCheck struct {
	// Driver is the driver block's name, or the preset's type.
	Driver string `json:"driver"`
	Type   string `json:"type"`
	// Agents are the playbook's agents that use it.
	Agents []string `json:"agents,omitempty"`
	// Program, Path and Version are a CLI driver's.
	Program string `json:"program,omitempty"`
	Path    string `json:"path,omitempty"`
	Version string `json:"version,omitempty"`
	BaseURL string `json:"base_url,omitempty"`
	// Auth says where the driver's key or login comes from; AuthOK is
	// false when none was found.
	Auth   string      `json:"auth"`
	AuthOK bool        `json:"auth_ok"`
	Call   *doctorCall `json:"call,omitempty"`
	// Problems say what stops the driver from working.
	Problems []string `json:"problems,omitempty"`
}

// doctorCall is the result of the --call check.
type doctorCall struct {
	OK        bool     `json:"ok"`
	Answer    string   `json:"answer,omitempty"`
	Error     string   `json:"error,omitempty"`
	DurationS float64  `json:"duration_s"`
	Tokens    int      `json:"tokens"`
	CostUSD   *float64 `json:"cost_usd"`
}

// doctorPresets are the drivers apl doctor checks without a playbook.
var doctorPresets = []string{agent.TypeClaudeCode, agent.TypeCodex, agent.TypeGemini, agent.TypeOpenAI, agent.TypeAnthropic}

func (c *doctorCmd) Run(e *env) error {
	type target struct {
		name   string
		cfg    agent.Config
		err    error
		agents []string
	}
	var targets []*target
	if c.Path == "" {
		for _, t := range doctorPresets {
			targets = append(targets, &target{name: t, cfg: agent.Config{Type: t}})
		}
	} else {
		pb, _, err := e.load(c.Path)
		if err != nil {
			return err
		}
		byName := map[string]*target{}
		for _, name := range sortedKeys(pb.Agents) {
			a := pb.Agents[name]
			if a.Driver == "" {
				fmt.Fprintf(e.stderr, "apl doctor: agent %q has no driver; runs need --agent-cmd\n", name)
				continue
			}
			t := byName[a.Driver]
			if t == nil {
				t = &target{name: a.Driver, cfg: agent.Config{Type: a.Driver}}
				if dr := pb.Drivers[a.Driver]; dr != nil {
					t.cfg, t.err = interp.DriverConfig(dr)
				}
				byName[a.Driver] = t
				targets = append(targets, t)
			}
			t.agents = append(t.agents, name)
		}
	}
	var checks []doctorCheck
	failed := false
	for _, t := range targets {
		ch := doctorCheck{Driver: t.name, Type: t.cfg.Type, Agents: t.agents}
		if t.err != nil {
			ch.Problems = append(ch.Problems, t.err.Error())
		} else {
			diagnose(&ch, t.cfg, c.Call)
		}
		failed = failed || len(ch.Problems) > 0
		checks = append(checks, ch)
	}
	if c.JSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(checks); err != nil {
			return err
		}
	} else {
		writeDoctor(e.stdout, checks)
	}
	if failed {
		return exitWith(exitFailed, nil)
	}
	return nil
}

// diagnose fills in ch for the driver cfg describes: its program and
// version, its key or login, and with call, one tiny call.
func diagnose(ch *doctorCheck, cfg agent.Config, call bool) {
	setup, err := agent.SetupOf(cfg)
	if err != nil {
		ch.Problems = append(ch.Problems, err.Error())
		return
	}
	ch.Program, ch.BaseURL = setup.Program, setup.BaseURL
	if setup.Program != "" {
		path, err := exec.LookPath(setup.Program)
		if err != nil {
			ch.Problems = append(ch.Problems, fmt.Sprintf("%s is not installed: not found on PATH", setup.Program))
			return
		}
		ch.Path = path
		if setup.VersionArgs != nil {
			v, err := programVersion(path, setup.VersionArgs, cfg.Env)
			if err != nil {
				ch.Problems = append(ch.Problems, fmt.Sprintf("%s %s: %v", setup.Program, strings.Join(setup.VersionArgs, " "), err))
			}
			ch.Version = v
		}
	}
	ch.Auth, ch.AuthOK = authOf(setup, cfg)
	if !ch.AuthOK && setup.KeyEnv != "" && !isLocal(setup.BaseURL) {
		ch.Problems = append(ch.Problems, "no API key: "+ch.Auth)
	}
	if call {
		ch.Call = tinyCall(cfg)
		if !ch.Call.OK {
			ch.Problems = append(ch.Problems, "the call failed: "+ch.Call.Error)
		}
	}
}

// programVersion runs the program's version command: the first line it
// prints.
func programVersion(path string, args []string, env map[string]string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	first := strings.TrimSpace(strings.SplitN(strings.TrimSpace(out.String()), "\n", 2)[0])
	if err != nil {
		if msg := strings.TrimSpace(errOut.String()); msg != "" {
			err = fmt.Errorf("%w: %s", err, strings.SplitN(msg, "\n", 2)[0])
		}
		return first, err
	}
	return first, nil
}

// authOf says where the driver's key or login comes from, without the
// network: a variable that is set (in the driver's env or apl's), or a
// file a CLI's login left in the home directory.
func authOf(s agent.Setup, cfg agent.Config) (string, bool) {
	set := func(name string) bool { return cfg.Env[name] != "" || os.Getenv(name) != "" }
	if s.KeyEnv != "" {
		if set(s.KeyEnv) {
			return s.KeyEnv + " is set", true
		}
		if isLocal(s.BaseURL) {
			return s.KeyEnv + " is not set; none is sent to a local server", true
		}
		return s.KeyEnv + " is not set", false
	}
	for _, name := range s.AuthEnv {
		if set(name) {
			return name + " is set", true
		}
	}
	home, _ := os.UserHomeDir()
	for _, f := range s.AuthFiles {
		if home == "" {
			break
		}
		if _, err := os.Stat(filepath.Join(home, f)); err == nil {
			return "logged in (" + filepath.Join("~", f) + ")", true
		}
	}
	if len(s.AuthEnv) == 0 && len(s.AuthFiles) == 0 {
		return "nothing to check", true
	}
	what := "none of " + strings.Join(s.AuthEnv, ", ") + " is set"
	if len(s.AuthFiles) > 0 {
		what += ", and no login in ~/" + filepath.ToSlash(s.AuthFiles[0])
	}
	// A login may live elsewhere (the macOS keychain): a warning, which
	// --call settles.
	return what + "; log in with " + s.Program + " (or --call to be sure)", false
}

// isLocal reports whether an HTTP driver's base URL is this machine.
func isLocal(base string) bool {
	for _, h := range []string{"://localhost", "://127.", "://[::1]"} {
		if strings.Contains(base, h) {
			return true
		}
	}
	return false
}

// tinyCall asks the driver for one word.
func tinyCall(cfg agent.Config) *doctorCall {
	if cfg.Type == agent.TypeOpenAI || cfg.Type == agent.TypeAnthropic {
		cfg.MaxTokens = 16
	}
	res := &doctorCall{}
	d, err := agent.New(cfg)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	wd, _ := os.Getwd()
	start := time.Now()
	resp, err := d.Call(context.Background(), agent.Request{
		Step: "doctor", Agent: "doctor", Prompt: "Reply with the one word OK.", Attempt: 1,
		Workdir: wd, Timeout: 2 * time.Minute,
	})
	res.DurationS = time.Since(start).Round(10 * time.Millisecond).Seconds()
	res.Tokens, res.CostUSD = resp.Usage.Total(), resp.CostUSD
	res.Answer = strings.TrimSpace(firstLine(resp.Text))
	if err != nil {
		res.Error = err.Error()
		return res
	}
	if res.Answer == "" {
		res.Error = "the answer is empty"
		return res
	}
	res.OK = true
	return res
}

func writeDoctor(w io.Writer, checks []doctorCheck) {
	for _, ch := range checks {
		head := ch.Driver
		if ch.Type != "" && ch.Type != ch.Driver {
			head = fmt.Sprintf("driver %q (%s)", ch.Driver, ch.Type)
		}
		if len(ch.Agents) > 0 {
			head += ", for " + strings.Join(ch.Agents, ", ")
		}
		status := "ok"
		if len(ch.Problems) > 0 {
			status = "PROBLEM"
		} else if !ch.AuthOK {
			status = "warning"
		}
		fmt.Fprintf(w, "%s: %s\n", head, status)
		if ch.Path != "" {
			fmt.Fprintf(w, "  program  %s\n", ch.Path)
		}
		if ch.Version != "" {
			fmt.Fprintf(w, "  version  %s\n", ch.Version)
		}
		if ch.BaseURL != "" {
			fmt.Fprintf(w, "  endpoint %s\n", ch.BaseURL)
		}
		if ch.Auth != "" {
			fmt.Fprintf(w, "  auth     %s\n", ch.Auth)
		}
		if c := ch.Call; c != nil && c.OK {
			cost := ""
			if c.CostUSD != nil {
				cost = fmt.Sprintf(", $%.4f", *c.CostUSD)
			}
			fmt.Fprintf(w, "  call     ok in %.1fs: %q (%d tokens%s)\n", c.DurationS, c.Answer, c.Tokens, cost)
		}
		for _, p := range ch.Problems {
			fmt.Fprintf(w, "  problem  %s\n", p)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
