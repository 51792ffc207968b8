package lsp

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The VS Code extension's grammars (vscode/syntaxes) are checked here, so
// that go test catches a broken one without VS Code: each is JSON, every
// include names a rule or grammar that exists, every regular expression
// compiles in the subset Go, JavaScript and Oniguruma (TextMate's) share
// (no lookaround; an end pattern may name its begin pattern's captures, as
// TextMate allows), and the rules colour sample playbook lines as meant.

type grammarRule struct {
	Name, ContentName, Match, Begin, End, Include string
	Captures, BeginCaptures, EndCaptures          map[string]struct{ Name string }
	Patterns                                      []*grammarRule
}

type grammar struct {
	ScopeName  string
	Patterns   []*grammarRule
	Repository map[string]*grammarRule
}

func loadGrammars(t *testing.T) map[string]*grammar {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("vscode", "syntaxes", "*.json"))
	if err != nil || len(files) != 3 {
		t.Fatalf("grammars: %v %v", files, err)
	}
	out := map[string]*grammar{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var g grammar
		if err := json.Unmarshal(b, &g); err != nil {
			t.Fatalf("%s is no JSON grammar: %v", f, err)
		}
		out[g.ScopeName] = &g
	}
	return out
}

// rules calls f on every rule of g.
func (g *grammar) rules(f func(*grammarRule)) {
	var walk func([]*grammarRule)
	walk = func(rs []*grammarRule) {
		for _, r := range rs {
			f(r)
			walk(r.Patterns)
		}
	}
	walk(g.Patterns)
	for _, r := range g.Repository {
		f(r)
		walk(r.Patterns)
	}
}

// backref is a reference to a begin pattern's capture, in an end pattern.
var backref = regexp.MustCompile(`\\[1-9]`)

func TestGrammarsCompileAndInclude(t *testing.T) {
	gs := loadGrammars(t)
	var all []string
	for scope, g := range gs {
		g.rules(func(r *grammarRule) {
			for _, re := range []string{r.Match, r.Begin, r.End} {
				if re == "" {
					continue
				}
				all = append(all, re)
				if strings.Contains(re, "(?=") || strings.Contains(re, "(?!") || strings.Contains(re, "(?<") {
					t.Errorf("%s: %q looks around, which Go's regexp cannot check", scope, re)
				}
				if _, err := regexp.Compile(backref.ReplaceAllString(re, "EOT")); err != nil {
					t.Errorf("%s: %q: %v", scope, re, err)
				}
			}
			switch inc := r.Include; {
			case inc == "" || inc == "$self":
			case strings.HasPrefix(inc, "#"):
				if g.Repository[inc[1:]] == nil {
					t.Errorf("%s includes %s, which its repository lacks", scope, inc)
				}
			case gs[inc] == nil:
				t.Errorf("%s includes %s, which no grammar is", scope, inc)
			}
		})
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Log("node is not on PATH: the grammars' regular expressions are not compiled as JavaScript")
		return
	}
	b, _ := json.Marshal(all)
	cmd := exec.Command(node, "-e", `for (const r of JSON.parse(process.argv[1])) new RegExp(r)`, string(b))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("a grammar's regular expression is no JavaScript one: %v\n%s", err, out)
	}
}

func TestGrammarColoursPlaybookLines(t *testing.T) {
	gs := loadGrammars(t)
	main, inj, expr := gs["source.apl"], gs["source.apl.condition-injection"], gs["source.apl-expr"]
	if main == nil || inj == nil || expr == nil {
		t.Fatalf("grammars by scope: %v", gs)
	}
	// find is the first rule of rs (and the rules they include) whose
	// scope names contain scope.
	var find func(g *grammar, rs []*grammarRule, scope string) *grammarRule
	seen := map[*grammarRule]bool{} // rules include each other
	find = func(g *grammar, rs []*grammarRule, scope string) *grammarRule {
		for _, r := range rs {
			if seen[r] {
				continue
			}
			seen[r] = true
			if strings.Contains(r.Name, scope) || strings.Contains(r.ContentName, scope) {
				return r
			}
			for _, c := range r.Captures {
				if strings.Contains(c.Name, scope) {
					return r
				}
			}
			if strings.HasPrefix(r.Include, "#") {
				if x := find(g, []*grammarRule{g.Repository[r.Include[1:]]}, scope); x != nil {
					return x
				}
			}
			if x := find(g, r.Patterns, scope); x != nil {
				return x
			}
		}
		return nil
	}
	matches := func(g *grammar, scope, line, want string) {
		t.Helper()
		clear(seen)
		r := find(g, g.Patterns, scope)
		if r == nil {
			t.Errorf("%s: no rule gives %s", g.ScopeName, scope)
			return
		}
		re := r.Match
		if re == "" {
			re = r.Begin
		}
		m := regexp.MustCompile(re).FindStringSubmatch(line)
		if m == nil || !strings.Contains(strings.Join(m, "|"), want) {
			t.Errorf("%s: %s (%q) on %q gives %q, want %q", g.ScopeName, scope, re, line, m, want)
		}
	}
	matches(main, "storage.type.block", `step "plan" {`, "step")
	matches(main, "entity.name.label", `  rule "again" {`, `"again"`)
	matches(main, "variable.other.property", `  returns = object({ score = number })`, "returns")
	matches(main, "variable.language", `    command = ["echo", steps.rate.output.score]`, "steps")
	matches(main, "entity.name.function", `  prompt = file("prompts/plan.md")`, "file")
	matches(main, "string.unquoted.heredoc", `  template = <<-EOT`, "EOT")
	matches(inj, "meta.embedded.expr", `      when = "steps.verify.output.pass && len(steps.plan.output.tasks) > 0"`, `when`)
	cond := `steps.verify.output.pass && len(steps.plan.output.tasks) > 0 || steps.triage.output.kind == \"bug\"`
	matches(expr, "variable.other.member", cond, ".verify.output.pass")
	matches(expr, "entity.name.function", cond, "len")
	matches(expr, "string.quoted.double", cond, `\"bug\"`)
	matches(expr, "keyword.operator.apl-expr", cond, "&&")
}

// TestGrammarTokenizesAsVSCode tokenizes sample lines with the grammars
// as VS Code does (vscode/test/grammar.test.js: vscode-textmate over
// Oniguruma), the injection included, when the extension's packages are
// installed.
func TestGrammarTokenizesAsVSCode(t *testing.T) {
	nodeTest(t, "grammar.test.js", "vscode-textmate")
}

// TestExtensionClaimsOnlyPlaybooks checks which .hcl files the VS Code
// extension claims as playbooks (vscode/test/detect.test.js): apl's
// playbooks, forks and test files, not Terraform, Packer or Nomad files.
// It needs the extension's packages installed, as the grammar test does.
func TestExtensionClaimsOnlyPlaybooks(t *testing.T) {
	nodeTest(t, "detect.test.js", "typescript")
}

// nodeTest runs the extension's test script vscode/test/NAME under node,
// or skips when node or the extension's package pkg is not installed
// (make vscode runs them all, with npm test, wherever npm is).
func nodeTest(t *testing.T, name, pkg string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH: vscode/test/" + name + " not run")
	}
	if _, err := os.Stat(filepath.Join("vscode", "node_modules", pkg)); err != nil {
		t.Skip("vscode/node_modules is not installed (npm install in cmd/internal/lsp/vscode): vscode/test/" + name + " not run")
	}
	cmd := exec.Command(node, filepath.Join("test", name))
	cmd.Dir = "vscode"
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("vscode/test/%s: %v\n%s", name, err, out)
	}
}
