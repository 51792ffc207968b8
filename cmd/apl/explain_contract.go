package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/lang"
	"github.com/zclconf/go-cty/cty"
)

// contractStep reads the step an explain --contract address names:
// step.NAME, or NAME alone.
func contractStep(addr string) string {
	if segs, err := lang.SplitAddress(addr); err == nil && len(segs) == 2 && segs[0] == "step" {
		return segs[1]
	}
	return addr
}

// contractJSON is what apl explain --contract --json prints.
type contractJSON struct {
	Step    string              `json:"step"`
	At      string              `json:"at"`
	Agent   contractAgentJSON   `json:"agent"`
	Prompt  contractPromptJSON  `json:"prompt"`
	Returns map[string]any      `json:"returns"`
	Fields  []contractFieldJSON `json:"fields"`
	Checks  []contractCheckJSON `json:"checks"`
}

type contractAgentJSON struct {
	Name   string `json:"name"`
	Type   string `json:"type"`
	Driver string `json:"driver"`
	Model  string `json:"model,omitempty"`
	System string `json:"system,omitempty"`
}

type contractPromptJSON struct {
	Name      string   `json:"name,omitempty"`
	At        string   `json:"at"`
	Variables []string `json:"variables"`
	Vars      string   `json:"vars,omitempty"`
}

type contractFieldJSON struct {
	Path     string `json:"path"`
	Type     string `json:"type"`
	Optional bool   `json:"optional"`
}

type contractCheckJSON struct {
	Name      string `json:"name"`
	At        string `json:"at"`
	Condition string `json:"condition"`
	Message   string `json:"message,omitempty"`
	OnFail    string `json:"on_fail"`
	Max       int    `json:"max"`
}

func contractReport(c *lang.Contract) contractJSON {
	out := contractJSON{
		Step: c.Step.Name, At: rangeLine(c.Step.DeclRange),
		Agent:   contractAgentJSON{Name: c.Agent.Name, Type: c.Agent.Type, Driver: c.Agent.Driver, Model: c.Agent.Model, System: c.Agent.System},
		Prompt:  contractPromptJSON{At: rangeLine(c.PromptRange), Variables: c.Variables, Vars: c.Vars},
		Returns: map[string]any{"type": "string"},
		Fields:  []contractFieldJSON{},
		Checks:  []contractCheckJSON{},
	}
	if out.Prompt.Variables == nil {
		out.Prompt.Variables = []string{}
	}
	if c.Prompt != nil {
		out.Prompt.Name = c.Prompt.Name
	}
	if c.Returns != cty.NilType {
		out.Returns = agent.Schema(c.Returns)
	}
	for _, f := range c.Fields {
		out.Fields = append(out.Fields, contractFieldJSON{Path: f.Path, Type: f.TypeName(), Optional: f.Optional})
	}
	for _, ck := range c.Checks {
		out.Checks = append(out.Checks, contractCheckJSON{Name: ck.Name, At: rangeLine(ck.Range), Condition: ck.Condition,
			Message: ck.Message, OnFail: string(ck.OnFail), Max: ck.Max})
	}
	return out
}

// writeContract prints a step's contract for a reader: the agent, the
// prompt, the answer's JSON Schema, its fields with the optional ones
// marked, and the checks.
func writeContract(w io.Writer, c contractJSON) error {
	fmt.Fprintf(w, "step %s: an agent step\n  %s\n", c.Step, c.At)
	driver := c.Agent.Driver
	if driver == "" {
		driver = "none: the run's --agent-cmd"
	}
	fmt.Fprintf(w, "\nagent %s\n  type: %s\n  driver: %s\n", c.Agent.Name, c.Agent.Type, driver)
	if c.Agent.Model != "" {
		fmt.Fprintf(w, "  model: %s\n", c.Agent.Model)
	}
	if c.Agent.System != "" {
		fmt.Fprintf(w, "  system: %s\n", firstTextLine(c.Agent.System))
	}
	if c.Prompt.Name != "" {
		fmt.Fprintf(w, "\nprompt %s\n", c.Prompt.Name)
	} else {
		fmt.Fprintf(w, "\nprompt (inline)\n")
	}
	fmt.Fprintf(w, "  %s\n", c.Prompt.At)
	if len(c.Prompt.Variables) > 0 {
		fmt.Fprintf(w, "  reads: %s\n", strings.Join(c.Prompt.Variables, ", "))
	}
	if c.Prompt.Vars != "" {
		fmt.Fprintf(w, "  vars = %s\n", firstTextLine(c.Prompt.Vars))
	}
	fmt.Fprintf(w, "\nreturns, as JSON Schema (a field not in \"required\" may be left out)\n")
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("  ", "  ")
	if err := enc.Encode(c.Returns); err != nil {
		return exitWith(exitInternal, err)
	}
	fmt.Fprintf(w, "  %s", buf.String())
	if len(c.Fields) > 0 {
		fmt.Fprintf(w, "\nfields\n")
		width := 0
		for _, f := range c.Fields {
			width = max(width, len(f.Path))
		}
		for _, f := range c.Fields {
			opt := ""
			if f.Optional {
				opt = "  (optional)"
			}
			fmt.Fprintf(w, "  %-*s  %s%s\n", width, f.Path, f.Type, opt)
		}
	}
	if len(c.Checks) == 0 {
		fmt.Fprintf(w, "\nchecks: none\n")
		return nil
	}
	fmt.Fprintf(w, "\nchecks\n")
	for _, ck := range c.Checks {
		fmt.Fprintf(w, "  %s: %s\n    %s", ck.Name, ck.Condition, ck.At)
		switch {
		case ck.OnFail == string(lang.OnFailRetry) && ck.Max == 1:
			fmt.Fprintf(w, "; on failure, ask again (once at most)\n")
		case ck.OnFail == string(lang.OnFailRetry):
			fmt.Fprintf(w, "; on failure, ask again (%d times at most)\n", ck.Max)
		default:
			fmt.Fprintf(w, "; on failure, fail the step\n")
		}
		if ck.Message != "" {
			fmt.Fprintf(w, "    message: %s\n", ck.Message)
		}
	}
	return nil
}

// firstTextLine is s's first line, with " …" when more follow.
func firstTextLine(s string) string {
	if first, _, multi := strings.Cut(strings.TrimSpace(s), "\n"); multi {
		return first + " …"
	}
	return strings.TrimSpace(s)
}
