package main

import (
	"fmt"
	"strings"

	"github.com/apl-lang/apl/lang"
	"github.com/hashicorp/hcl/v2"
)

type explainCmd struct {
	Playbook string `arg:"" help:"The playbook: a .hcl file, a directory or stdlib:NAME."`
	Addr     string `arg:"" help:"An attribute or block: step.verify.timeout, step.verify.gate.rule.pass, playbook.description; with --contract, an agent step: step.rate."`
	JSON     bool   `name:"json" help:"Print the origins (or the contract) as JSON."`
	Contract bool   `name:"contract" help:"Print the agent step's contract instead: its returns as JSON Schema with optional fields marked, its checks, its agent, and its prompt's source and the names it reads."`
}

// Run prints where each attribute at the address comes from: the file and
// line of the definition in effect, and the upstream definitions it
// overrides when the playbook extends another.
func (c *explainCmd) Run(e *env) error {
	pb, _, err := e.load(c.Playbook)
	if err != nil {
		return err
	}
	if c.Contract {
		ct, err := pb.Contract(contractStep(c.Addr))
		if err != nil {
			return exitWith(exitUsage, fmt.Errorf("%s: %w", c.Playbook, err))
		}
		if c.JSON {
			return printJSON(e.stdout, contractReport(ct))
		}
		return writeContract(e.stdout, contractReport(ct))
	}
	origins, removal, err := pb.Explain(c.Addr)
	if err != nil {
		return exitWith(exitUsage, fmt.Errorf("%s: %w", c.Playbook, err))
	}
	if c.JSON {
		return printJSON(e.stdout, explainJSON(c.Addr, origins, removal))
	}
	if removal != nil {
		fmt.Fprintf(e.stdout, "%s: removed at %s\n  upstream block at %s\n", removal.Block, rangeLine(removal.Range), rangeLine(removal.Upstream))
		return nil
	}
	for _, o := range origins {
		from := ""
		if o.Template != "" {
			from = " (template." + o.Template + ")"
		}
		fmt.Fprintf(e.stdout, "%s = %s\n  %s%s\n", o.Addr, valueText(o.Winner), rangeLine(o.Winner.Range), from)
		for _, d := range o.Overrode {
			fmt.Fprintf(e.stdout, "  overrides %s at %s\n", valueText(d), rangeLine(d.Range))
		}
	}
	return nil
}

// valueText is a definition's value, its first line only.
func valueText(d lang.Definition) string {
	_, v, ok := strings.Cut(d.Text, "=")
	if !ok {
		return d.Text
	}
	v = strings.TrimSpace(v)
	if first, _, multi := strings.Cut(v, "\n"); multi {
		return first + " …"
	}
	return v
}

func rangeLine(r hcl.Range) string { return fmt.Sprintf("%s:%d", r.Filename, r.Start.Line) }

func explainJSON(addr string, origins []lang.Origin, removal *lang.Removal) map[string]any {
	if removal != nil {
		return map[string]any{"address": addr, "removed": map[string]string{
			"block": removal.Block, "at": rangeLine(removal.Range), "upstream": rangeLine(removal.Upstream)}}
	}
	type def struct {
		At   string `json:"at"`
		Text string `json:"text"`
	}
	type origin struct {
		Address   string `json:"address"`
		Value     def    `json:"value"`
		Overrides []def  `json:"overrides"`
		Template  string `json:"template,omitempty"`
	}
	out := []origin{}
	for _, o := range origins {
		og := origin{Address: o.Addr, Value: def{rangeLine(o.Winner.Range), o.Winner.Text}, Overrides: []def{}, Template: o.Template}
		for _, d := range o.Overrode {
			og.Overrides = append(og.Overrides, def{rangeLine(d.Range), d.Text})
		}
		out = append(out, og)
	}
	return map[string]any{"address": addr, "attributes": out}
}
