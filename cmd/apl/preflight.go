package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/lang"
)

// clis are the programs the CLI drivers run, and how to install them.
var clis = map[string]struct{ program, install string }{
	agent.TypeClaudeCode: {"claude", "npm install -g @anthropic-ai/claude-code"},
	agent.TypeCodex:      {"codex", "npm install -g @openai/codex"},
	agent.TypeGemini:     {"gemini", "npm install -g @google/gemini-cli"},
}

// preflight finds, before the first step runs, what would fail an agent
// step once the run reached it: an agent with no driver and no
// --agent-cmd, an --agent-cmd program that is not there, a CLI that a
// driver runs and that is not installed. A run would otherwise find out
// only at that step, maybe after paid agent calls, and fail there. With
// --replay no agent is run, so nothing is checked. Problems are reported
// all at once; each names the agent and the step that needs it.
func preflight(pb *lang.Playbook, agentCmd []string, workdir string, f cassetteFlags) error {
	if f.Replay != "" {
		return nil
	}
	var problems []string
	seen := map[string]bool{}
	report := func(p string) {
		if !seen[p] {
			seen[p] = true
			problems = append(problems, p)
		}
	}
	if len(agentCmd) > 0 {
		if uses := agentSteps(pb); len(uses) > 0 {
			if err := findProgram(agentCmd[0], workdir); err != nil {
				report(fmt.Sprintf("--agent-cmd: %v", err))
			}
		}
	} else {
		// The agents without a driver are said once, together: a stdlib
		// playbook's agents all name none.
		var driverless []string
		stepsOf := map[string][]string{}
		for _, u := range agentSteps(pb) {
			where := fmt.Sprintf("agent %q (step %q)", u.agent.Name, u.step.Name)
			if u.agent.Driver == "" {
				if _, ok := stepsOf[u.agent.Name]; !ok {
					driverless = append(driverless, u.agent.Name)
				}
				if !slices.Contains(stepsOf[u.agent.Name], u.step.Name) {
					stepsOf[u.agent.Name] = append(stepsOf[u.agent.Name], u.step.Name)
				}
				continue
			}
			cfg := agent.Config{Type: u.agent.Driver}
			driver := fmt.Sprintf("driver %q", u.agent.Driver)
			if dr := u.pb.Drivers[u.agent.Driver]; dr != nil {
				c, err := interp.DriverConfig(dr)
				if err != nil {
					continue // the step says what is wrong with the block
				}
				cfg = c
				driver = fmt.Sprintf("driver %q (type %s)", dr.Name, dr.Type)
			}
			program := ""
			if len(cfg.Command) > 0 {
				program = cfg.Command[0]
			} else if c, ok := clis[cfg.Type]; ok {
				program = c.program
			}
			if program == "" {
				continue
			}
			if err := findProgram(program, workdir); err != nil {
				msg := fmt.Sprintf("%s of %s: %v", driver, where, err)
				if c, ok := clis[cfg.Type]; ok && len(cfg.Command) == 0 {
					msg += fmt.Sprintf("; install it (%s), or run with --agent-cmd", c.install)
				}
				report(msg)
			}
		}
		if len(driverless) > 0 {
			problems = append([]string{noDriver(driverless, stepsOf)}, problems...)
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return errors.New(strings.Join(problems, "\napl: "))
}

// noDriver says which agents have no driver, with the steps that call
// them, and the two ways to give them one.
func noDriver(agents []string, stepsOf map[string][]string) string {
	var b strings.Builder
	if len(agents) == 1 {
		b.WriteString("agent ")
	} else {
		fmt.Fprintf(&b, "%d agents have no driver: ", len(agents))
	}
	for i, a := range agents {
		if i > 0 {
			b.WriteString(", ")
		}
		steps := stepsOf[a]
		word := "step"
		if len(steps) > 1 {
			word = "steps"
		}
		q := make([]string, len(steps))
		for j, s := range steps {
			q[j] = fmt.Sprintf("%q", s)
		}
		fmt.Fprintf(&b, "%q (%s %s)", a, word, strings.Join(q, ", "))
	}
	if len(agents) == 1 {
		b.WriteString(" has no driver")
	}
	b.WriteString(": run with --agent-cmd CMD to send every agent step to one command (claude -p, codex exec, a script), or set driver in each agent block (for a stdlib playbook, in a fork)")
	return b.String()
}

// agentUse is an agent step and the playbook it is in.
type agentUse struct {
	pb    *lang.Playbook
	step  *lang.Step
	agent *lang.Agent
}

// agentSteps lists the agent steps of pb and of the playbooks its steps
// run, in order.
func agentSteps(pb *lang.Playbook) []agentUse {
	var out []agentUse
	var visit func(*lang.Playbook, []*lang.Playbook)
	visit = func(p *lang.Playbook, stack []*lang.Playbook) {
		if slices.Contains(stack, p) {
			return
		}
		stack = append(stack, p)
		for _, s := range p.AllSteps() {
			switch a := s.Action.(type) {
			case *lang.AgentCall:
				if a.Agent != nil {
					out = append(out, agentUse{p, s, a.Agent})
				}
			case *lang.SubPlaybook:
				if a.Playbook != nil {
					visit(a.Playbook, stack)
				}
			}
		}
	}
	visit(pb, nil)
	return out
}

// findProgram checks that a command's program can be started as the
// drivers start it: a name is looked up on PATH, a path is taken from
// workdir, where agent commands run.
func findProgram(name, workdir string) error {
	if !strings.ContainsRune(name, '/') && !strings.ContainsRune(name, filepath.Separator) {
		if _, err := exec.LookPath(name); err != nil {
			return fmt.Errorf("%s is not installed, or not on PATH", name)
		}
		return nil
	}
	p := name
	if !filepath.IsAbs(p) {
		p = filepath.Join(workdir, p)
	}
	st, err := os.Stat(p)
	switch {
	case err != nil:
		return fmt.Errorf("%s: no such file", name)
	case st.IsDir() || st.Mode()&0o111 == 0:
		return fmt.Errorf("%s is not an executable file", name)
	}
	return nil
}
