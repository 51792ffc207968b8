package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/lang"
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

type planCmd struct {
	Playbook     string   `arg:"" help:"The playbook: a .hcl file, a directory or stdlib:NAME."`
	Items        int      `help:"Assume at most N items in every for_each list whose length is not a constant." placeholder:"N"`
	PromptTokens int      `name:"prompt-tokens" help:"Assume every agent prompt holds at most N tokens (without it, tokens and cost are bounded only by caps)." placeholder:"N"`
	JSON         bool     `name:"json" help:"Print the plan as JSON."`
	Mode         string   `placeholder:"NAME" help:"Plan a run in this mode: settings that read inputs (caps, concurrency, limits, timeouts) take its values."`
	Var          []string `sep:"none" aliases:"input" placeholder:"NAME=VALUE" help:"Plan a run given this input value, as apl run --var sets it (repeatable; --input is the same); settings that read it take it."`
}

// planOptions are the defaults a run applies, which the builtins own.
func planOptions(items, promptTokens int) lang.PlanOptions {
	return lang.PlanOptions{
		Items:        items,
		PromptTokens: promptTokens,
		ShellTimeout: builtins.DefaultTimeout,
		AgentTimeout: func(t string) time.Duration {
			if t == agent.TypeOpenAI || t == agent.TypeAnthropic {
				return agent.DefaultHTTPTimeout
			}
			// The CLI drivers, and --agent-cmd (a command driver).
			return agent.DefaultCLITimeout
		},
		AnswerTokens: func(t string) int {
			if t == agent.TypeAnthropic {
				return 4096 // the anthropic driver's default max_tokens
			}
			return 0
		},
	}
}

func (c *planCmd) Run(e *env) error {
	if c.Items < 0 || c.PromptTokens < 0 {
		return exitWith(exitUsage, fmt.Errorf("--items and --prompt-tokens take a whole number, not a negative one"))
	}
	pb, _, err := e.load(c.Playbook)
	if err != nil {
		return err
	}
	fixed, settings, err := c.settings(pb)
	if err != nil {
		return exitWith(exitUsage, err)
	}
	opts := planOptions(c.Items, c.PromptTokens)
	opts.Settings = fixed
	p := lang.ComputePlan(pb, opts)
	if c.JSON {
		return printJSON(e.stdout, planJSON{p, factorsJSON(p.Unbounded), settings})
	}
	writePlan(e.stdout, p)
	writeSettings(e.stdout, settings)
	return nil
}

// settings works out the settings that read inputs from --mode and
// --var, the inputs' defaults standing in for the rest.
func (c *planCmd) settings(pb *lang.Playbook) (lang.FixedSettings, []lang.PlanSetting, error) {
	given := map[string]cty.Value{}
	for _, kv := range c.Var {
		name, raw, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, nil, fmt.Errorf("--var takes NAME=VALUE, not %q", kv)
		}
		in := pb.Input(name)
		if in == nil {
			return nil, nil, fmt.Errorf("--var %s: playbook %q has no input %q%s", kv, pb.Name, name, suggestInput(pb, name, "; did you mean %s?"))
		}
		v, err := parseInput(in, raw)
		if err != nil {
			return nil, nil, fmt.Errorf("--var %s: %w", kv, err)
		}
		given[name] = v
	}
	return pb.PlanSettings(c.Mode, given)
}

// writeSettings says which values the plan took for the settings that
// read inputs, and where they came from.
func writeSettings(w io.Writer, settings []lang.PlanSetting) {
	if len(settings) == 0 {
		return
	}
	fmt.Fprintln(w, "\nSettings fixed when a run starts, as this plan takes them:")
	for _, s := range settings {
		var from []string
		for _, in := range slices.Sorted(maps.Keys(s.From)) {
			src := s.From[in]
			switch src {
			case "default":
				src = "its default"
			case "input":
				src = "--var"
			}
			from = append(from, fmt.Sprintf("inputs.%s: %s", in, src))
		}
		fmt.Fprintf(w, "  %s = %s (%s)\n", s.Name, s.Value, strings.Join(from, ", "))
	}
}

// planJSON is a plan with each unbounded factor's place as FILE:LINE:COL.
type planJSON struct {
	*lang.Plan
	Unbounded []factorJSON       `json:"unbounded"`
	Settings  []lang.PlanSetting `json:"settings"`
}

type factorJSON struct {
	lang.Factor
	Where string `json:"where"`
}

func factorsJSON(fs []lang.Factor) []factorJSON {
	out := []factorJSON{}
	for _, f := range fs {
		out = append(out, factorJSON{f, where(f.Range)})
	}
	return out
}

func where(r hcl.Range) string {
	return fmt.Sprintf("%s:%d:%d", r.Filename, r.Start.Line, r.Start.Column)
}

func writePlan(w io.Writer, p *lang.Plan) {
	fmt.Fprintf(w, "Worst case of a run of %s\n\n", p.Playbook)
	names := make([]string, len(p.Steps))
	width := len("total")
	for i, s := range p.Steps {
		names[i] = s.Name
		switch {
		case s.ForEach != "":
			names[i] = s.ForEach + "/" + s.Name
		case s.OnFailure:
			names[i] = "on_failure/" + s.Name
		case s.Finally:
			names[i] = "finally/" + s.Name
		}
		width = max(width, len(names[i]))
	}
	// Names to the left, figures to the right.
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\tvisits\truns\tagent calls\ttokens\tcost\ttime\t\n", width, "step")
	for i, s := range p.Steps {
		fmt.Fprintf(tw, "%-*s\t%s\t%d\t%s\t%s\t%s\t%s\t\n", width, names[i], count(s.Visits), s.Runs,
			count(s.Total.Calls), count(s.Total.Tokens), cost(s.Total.CostUSD), seconds(s.Total.Seconds))
	}
	t := p.Total
	fmt.Fprintf(tw, "%-*s\t\t\t%s\t%s\t%s\t%s\t\n", width, "total", count(t.Calls), count(t.Tokens), cost(t.CostUSD), seconds(t.Seconds))
	tw.Flush()
	fmt.Fprintf(w, "\nretries (limits.max_retries counts them): %s\n", count(t.Retries))
	for _, c := range p.Capped {
		fmt.Fprintf(w, "%s holds %s to %s\n", c.Limit, c.Figure, capValue(c))
		if c.Call != nil {
			one := count(*c.Call)
			if c.Figure == "cost_usd" {
				one = cost(*c.Call)
			}
			if c.Call.Unbounded {
				fmt.Fprintf(w, "  a call starts only if what it may spend fits in what is left; plan cannot bound one call (see Unbounded); a call that neither its step's cap nor its driver's ceiling bounds starts alone, and may overrun it by what it spends\n")
			} else {
				fmt.Fprintf(w, "  a call starts only if what it may spend fits in what is left; one call reserves at most %s\n", one)
			}
		}
	}
	if p.Approximate {
		fmt.Fprintln(w, "\nThe paths through the caps are too many to search: the figures are a looser bound (every capped goto taken max times from every visit of its step), and no path is shown.")
	} else {
		fmt.Fprintf(w, "\nPath to the most agent calls (%s):\n", count(t.Calls))
		writePath(w, p.Path, "  ", true)
	}
	if len(p.Unbounded) > 0 {
		fmt.Fprintln(w, "\nUnbounded:")
		type group struct {
			figure, why string
			where       []string
		}
		var groups []*group
		byKey := map[string]*group{}
		for _, f := range p.Unbounded {
			k := f.Figure + "\x00" + f.Why
			g := byKey[k]
			if g == nil {
				g = &group{figure: f.Figure, why: f.Why}
				byKey[k] = g
				groups = append(groups, g)
			}
			g.where = append(g.where, fmt.Sprintf("step %s (%s)", f.Step, where(f.Range)))
		}
		for _, g := range groups {
			fmt.Fprintf(w, "  %s: %s:\n", g.figure, g.why)
			for _, s := range g.where {
				fmt.Fprintf(w, "    %s\n", s)
			}
		}
	}
}

// writePath writes a path as runs of steps, a line per gate decision; top
// marks the run's own steps, where the on_failure and finally steps begin.
func writePath(w io.Writer, path []lang.PathStep, indent string, top bool) {
	var line []string
	prefix := ""
	flush := func() {
		if len(line) > 0 {
			fmt.Fprintf(w, "%s%s%s\n", indent, prefix, strings.Join(line, " → "))
			line, prefix = nil, ""
		}
	}
	for i, ps := range path {
		if top && ps.OnFailure && (i == 0 || !path[i-1].OnFailure) {
			flush()
			prefix = "on_failure: "
		}
		if top && ps.Finally && (i == 0 || !path[i-1].Finally) {
			flush()
			prefix = "finally: "
		}
		s := ps.Step
		switch {
		case ps.Skipped:
			s += " (skipped)"
		case ps.Rule != "" && ps.Exhausted:
			s += " [" + ps.Rule + ", exhausted]"
		case ps.Rule != "":
			s += " [" + ps.Rule + "]"
		}
		if ps.Items != nil {
			s += fmt.Sprintf(" ×%s items", count(*ps.Items))
			if ps.Concurrency > 1 {
				s += fmt.Sprintf(", %d at a time", ps.Concurrency)
				if ps.Fails {
					s += ","
				}
			}
		}
		if ps.Fails {
			s += " fails"
		}
		line = append(line, s)
		if ps.Rule != "" || ps.Fails || ps.Body != nil {
			flush()
		}
		if ps.Body != nil {
			writePath(w, ps.Body, indent+"    ", false)
		}
	}
	flush()
}

func count(b lang.Bound) string {
	if b.Unbounded {
		return "unbounded"
	}
	return formatInt(int(b.N + 0.5))
}

func cost(b lang.Bound) string {
	if b.Unbounded {
		return "unbounded"
	}
	if b.N == 0 {
		return "$0"
	}
	return formatCost(b.N)
}

func seconds(b lang.Bound) string {
	if b.Unbounded {
		return "unbounded"
	}
	if b.N == 0 {
		return "0s"
	}
	return formatSeconds(b.N)
}

func capValue(c lang.Cap) string {
	switch c.Figure {
	case "cost_usd":
		return formatCost(c.Value)
	case "seconds":
		return formatSeconds(c.Value)
	}
	return formatInt(int(c.Value))
}
