package stdlib

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/apl-lang/apl/lang"
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// ReferenceFile is the name of each stdlib playbook's reference page,
// beside its README.
const ReferenceFile = "REFERENCE.md"

// fileBuiltins are the builtins that read or write files, by what they do
// with the path they are given.
var fileBuiltins = map[string]string{
	"file.read": "reads", "json.read": "reads", "file.sha256": "reads", "glob": "lists",
	"file.write": "writes", "file.append": "appends to", "jsonl.append": "appends to", "file.symlink": "links",
}

// Reference writes the reference page of the playbook ref, loaded as pb:
// its inputs, modes, agents, steps (each agent step's answer and checks,
// each gate's rules), the files its calls and documents read and write,
// and the events its gates record. It is made from the playbook's
// declarations alone, so a test can tell when a page is stale.
func Reference(ref string, pb *lang.Playbook) []byte {
	var b bytes.Buffer
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# %s reference\n\n", ref)
	w("<!-- Generated from the playbook's files by `go test ./stdlib -update`; do not edit. -->\n\n")
	if pb.Description != "" {
		w("%s\n\n", oneLine(pb.Description))
	}
	w("Contents: [inputs](#inputs), [agents](#agents), [steps](#steps), [files](#files), [events](#events).\n\n")

	w("## Inputs\n\n")
	if len(pb.Inputs) == 0 {
		w("None.\n\n")
	} else {
		w("| input | type | default | description |\n|---|---|---|---|\n")
		for _, in := range pb.Inputs {
			name := "`--" + strings.ReplaceAll(in.Name, "_", "-") + "`"
			if in.Flag != "" {
				name += " (`--" + in.Flag + "`)"
			}
			def := "required"
			if in.Default != cty.NilVal {
				def = "`" + valueText(in.Default) + "`"
			}
			w("| %s | `%s` | %s | %s |\n", name, typeText(in.Type), cell(def), cell(in.Description))
		}
		w("\n")
	}
	if len(pb.Modes) > 0 {
		w("Modes (`--mode NAME`): ")
		names := sortedKeys(pb.Modes)
		for i, n := range names {
			if i > 0 {
				w(", ")
			}
			w("`%s`", n)
		}
		w(".\n\n")
	}

	w("## Agents\n\n")
	if len(pb.Agents) == 0 {
		w("None.\n\n")
	} else {
		w("| agent | type | driver | model | description |\n|---|---|---|---|---|\n")
		for _, n := range sortedKeys(pb.Agents) {
			ag := pb.Agents[n]
			driver := ag.Driver
			if driver == "" {
				driver = "the run's (`--agent-cmd`)"
			} else {
				driver = "`" + driver + "`"
			}
			w("| `%s` | `%s` | %s | %s | %s |\n", n, ag.Type, driver, cell(ag.Model), cell(ag.Description))
		}
		w("\n")
	}

	w("## Steps\n\n")
	w("In the order they are declared; a run's path depends on each step's `when` and gate.\n\n")
	sections := []struct {
		title string
		steps []*lang.Step
	}{{"", pb.Steps}, {"on_failure", pb.OnFailure}, {"finally", pb.Finally}}
	for _, sec := range sections {
		if len(sec.steps) == 0 {
			continue
		}
		if sec.title != "" {
			w("### %s\n\n", sec.title)
		}
		for _, s := range sec.steps {
			writeStep(&b, pb, s)
		}
	}

	w("## Files\n\n")
	files := referenceFiles(pb)
	if len(files) == 0 {
		w("None found in the playbook's calls and documents.\n\n")
	} else {
		w("What the playbook's `call` steps and documents read and write, as their paths are written (shell steps and agents may touch others).\n\n")
		w("| path | what | where |\n|---|---|---|\n")
		for _, f := range files {
			w("| %s | %s | %s |\n", cell(f.path), f.what, f.where)
		}
		w("\n")
	}

	w("## Events\n\n")
	evs := referenceEvents(pb)
	if len(evs) == 0 {
		w("The playbook records no events of its own.\n\n")
	} else {
		w("| event | step | rule |\n|---|---|---|\n")
		for _, e := range evs {
			w("| `%s` | `%s` | %s |\n", e.name, e.step, e.rule)
		}
		w("\n")
	}
	w("Besides these, apl records its own: %s.\n", codeList(lang.AplEvents))
	return b.Bytes()
}

func writeStep(b *bytes.Buffer, pb *lang.Playbook, s *lang.Step) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	heading := "####"
	if s.Parent != nil {
		heading = "#####"
	}
	w("%s `%s`\n\n", heading, s.Name)
	if s.Description != "" {
		w("%s\n\n", oneLine(s.Description))
	}
	if s.Parent != nil {
		w("- in the body of `%s`, once per item\n", s.Parent.Name)
	}
	if s.Template != "" {
		w("- uses template `%s` (`self` is this step)\n", s.Template)
	}
	if s.ForEach != nil && s.ForEach.List != nil {
		w("- for each of `%s`\n", s.ForEach.List.Source)
	}
	if s.When != nil {
		w("- when `%s`\n", s.When.Source)
	}
	switch a := s.Action.(type) {
	case *lang.AgentCall:
		prompt := "an inline prompt"
		if a.Prompt != nil {
			prompt = fmt.Sprintf("prompt `%s`", a.Prompt.Name)
		}
		w("- asks agent `%s` with %s (%s)\n", a.Agent.Name, prompt, rel(a.Template.Range().Filename))
	case *lang.Shell:
		w("- runs a shell command\n")
	case *lang.Call:
		w("- calls `%s`\n", a.Builtin)
	case *lang.Ask:
		w("- asks a person\n")
	case *lang.SubPlaybook:
		w("- runs the playbook `%s`\n", a.Source)
	case nil:
		if s.ForEach == nil {
			w("- no action: it decides\n")
		}
	}
	if s.Returns != cty.NilType {
		if _, ok := s.Action.(*lang.AgentCall); ok {
			fields := lang.AnswerFields(s.Returns)
			if len(fields) == 0 {
				w("- answer: `%s`\n", typeText(s.Returns))
			} else {
				w("- answer: a JSON object with these fields\n")
				w("\n  | field | type | |\n  |---|---|---|\n")
				for _, f := range fields {
					opt := "required"
					if f.Optional {
						opt = "optional"
					}
					w("  | `%s` | `%s` | %s |\n", f.Path, f.TypeName(), opt)
				}
				w("\n")
			}
		} else if s.ForEach == nil {
			w("- output: `%s`\n", typeText(s.Returns))
		}
	}
	for _, c := range s.Checks {
		what := "asks again"
		if c.OnFail == lang.OnFailFail {
			what = "fails the step"
		} else if c.Max > 1 {
			what = fmt.Sprintf("asks again, %d times at most", c.Max)
		}
		cond := ""
		if c.Condition != nil {
			cond = c.Condition.Source
		}
		w("- check `%s`: `%s`; else %s", c.Name, oneLine(cond), what)
		if c.Message != nil {
			w(": %s", cell(oneLine(pb.SourceText(c.Message.Range()))))
		}
		w("\n")
	}
	if s.Gate != nil {
		for _, r := range s.Gate.Tried() {
			out := outcomeText(pb, r.Outcome)
			if r.When == nil && out == "" {
				continue // an otherwise that goes on
			}
			when := "otherwise"
			if r.When != nil {
				when = "`" + oneLine(r.When.Source) + "`"
			}
			w("- gate rule `%s`: %s%s\n", r.Name, when, out)
		}
	}
	w("\n")
}

// outcomeText says where a rule goes: " → goto plan (3 times at most)".
func outcomeText(pb *lang.Playbook, o *lang.Outcome) string {
	if o == nil {
		return ""
	}
	var parts []string
	if o.Goto != nil {
		g := "goto `" + o.Goto.Name + "`"
		switch {
		case o.Max == 1:
			g += " (once at most)"
		case o.Max > 1:
			g += fmt.Sprintf(" (%d times at most)", o.Max)
		}
		parts = append(parts, g)
	}
	if o.Finish != nil {
		parts = append(parts, "finish "+exprText(pb, o.Finish))
	}
	if o.Fail != nil {
		parts = append(parts, "fail "+exprText(pb, o.Fail))
	}
	if o.Event != "" {
		parts = append(parts, "event `"+o.Event+"`")
	}
	if len(parts) == 0 {
		return ""
	}
	out := " → " + strings.Join(parts, ", ")
	if ex := outcomeText(pb, o.Exhausted); ex != "" {
		out += "; once the cap is used up" + ex
	}
	return out
}

type refFile struct{ path, what, where string }

// referenceFiles lists the paths the playbook's file calls and documents
// name, in the order of its steps.
func referenceFiles(pb *lang.Playbook) []refFile {
	var out []refFile
	if pb.StatePath != "" {
		out = append(out, refFile{"`" + pb.StatePath + "`", "writes the run's state", "`state` block"})
	}
	for _, d := range pb.Documents {
		if d.Path != nil {
			out = append(out, refFile{exprText(pb, d.Path), "writes at every checkpoint", "document `" + d.Name + "`"})
		}
	}
	for _, s := range pb.AllSteps() {
		c, ok := s.Action.(*lang.Call)
		if !ok {
			continue
		}
		what, isFile := fileBuiltins[c.Builtin]
		if !isFile && !strings.HasPrefix(c.Builtin, "git.") {
			continue
		}
		path := "the repository"
		for _, a := range c.Args {
			if a.Name == "path" || a.Name == "pattern" {
				path = exprText(pb, a.Expr)
			}
		}
		if !isFile {
			what = "runs `" + c.Builtin + "` on"
		}
		out = append(out, refFile{path, what + " (`" + c.Builtin + "`)", "step `" + s.Name + "`"})
	}
	return out
}

type refEvent struct{ name, step, rule string }

// referenceEvents lists the events the playbook's gates record.
func referenceEvents(pb *lang.Playbook) []refEvent {
	var out []refEvent
	for _, s := range pb.AllSteps() {
		if s.Gate == nil {
			continue
		}
		for _, r := range s.Gate.Tried() {
			if r.Outcome == nil {
				continue
			}
			if o := r.Outcome; o.Event != "" {
				out = append(out, refEvent{o.Event, s.Name, "`" + r.Name + "`"})
			}
			if o := r.Outcome.Exhausted; o != nil && o.Event != "" {
				out = append(out, refEvent{o.Event, s.Name, "`" + r.Name + "`, once its cap is used up"})
			}
		}
	}
	return out
}

func exprText(pb *lang.Playbook, e hcl.Expression) string {
	if t := pb.SourceText(e.Range()); t != "" {
		return "`" + oneLine(t) + "`"
	}
	return "(computed)"
}

// rel is a file's name inside the playbook: prompts/rate.md.
func rel(name string) string {
	if i := strings.Index(name, "/"); i >= 0 && strings.HasPrefix(name, lang.StdlibPrefix) {
		return name[i+1:]
	}
	return name
}

func typeText(t cty.Type) string {
	return oneLine(lang.TypeText(t))
}

func valueText(v cty.Value) string {
	b, err := ctyjson.Marshal(v, v.Type())
	if err != nil {
		return v.GoString()
	}
	return string(b)
}

// oneLine joins s's lines, so that it fits a table cell or a list item.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// cell escapes what would break a Markdown table cell.
func cell(s string) string {
	return strings.ReplaceAll(oneLine(s), "|", `\|`)
}

func codeList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "`" + n + "`"
	}
	return strings.Join(q, ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
