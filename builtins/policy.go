package builtins

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// Policy is the sandbox rule set a Shell applies before it starts anything.
// It guards against the accidents the stdlib protocols forbid (the phase
// runner's sandbox policy); it is not a security boundary, since a
// determined script can always spell a command in a way no rule sees
// (a variable holding "git", a file it writes and then runs).
type Policy struct {
	// Blocklist holds Go regular expressions (RE2 syntax), each matched
	// against every simple command on its own: the command's words with
	// quotes removed, joined by single spaces. A script is parsed as bash
	// and every command in it is checked, including those in pipelines,
	// subshells, $(...), and `bash -c` or `eval` strings; a command run
	// through a wrapper (sudo, env, command, exec, nice, nohup, time,
	// timeout, xargs) is checked both with and without the wrapper. An
	// argv command is checked as one command. Anchor rules with ^ to
	// match the program name, so that an `echo` mentioning a command
	// is not refused.
	Blocklist []string
}

// DefaultPolicy refuses what the protocols name: `git reset --hard` (they
// require `git revert` so history survives), global package installs, sudo,
// and removing or deleting the root or home directory.
var DefaultPolicy = Policy{Blocklist: []string{
	`^git\s(?:.*\s)?reset\s(?:.*\s)?--hard(?:\s|=|$)`,
	`^(?:npm|pnpm)\s(?:.*\s)?(?:i|install|add|link)\s(?:.*\s)?(?:-g|--global|--location[= ]global)(?:\s|$)`,
	`^(?:npm|pnpm)\s(?:.*\s)?(?:-g|--global|--location[= ]global)\s(?:.*\s)?(?:i|install|add|link)(?:\s|$)`,
	`^yarn\s+global\s+add(?:\s|$)`,
	`^sudo(?:\s|$)`,
	`^rm\s(?:.*\s)?` + homeOrRoot + `(?:\s|$)`,
	`^find\s(?:.*\s)?` + homeOrRoot + `\s(?:.*\s)?-delete(?:\s|$)`,
}}

// homeOrRoot matches a word naming the root or home directory, or
// everything in it.
const homeOrRoot = `(?:/+|/+\*|~/*|~/+\*|\$HOME/*|\$HOME/+\*)`

// PolicyError reports a command the Policy refused. It is a distinct type
// so the interpreter can fail the step with the rule in the message instead
// of treating the refusal like a crash.
type PolicyError struct {
	// Rule is the blocklist pattern that matched, or "parse" when the
	// script is not valid bash and so cannot be checked.
	Rule string
	// Match is the part of the command the rule matched, or the parse
	// error.
	Match string
}

func (e *PolicyError) Error() string {
	if e.Rule == "parse" {
		return fmt.Sprintf("sandbox policy refuses the command: it does not parse as bash, so it cannot be checked: %s", e.Match)
	}
	return fmt.Sprintf("sandbox policy refuses the command: %q matches blocklist rule `%s`", e.Match, e.Rule)
}

// Check returns a *PolicyError if a command in script matches a blocklist
// rule or script is not valid bash, and a plain error if a rule is not a
// valid regular expression, so a typo in a policy fails loudly instead of
// letting everything through.
func (p Policy) Check(script string) error {
	res, err := p.compile()
	if err != nil || len(res) == 0 {
		return err
	}
	return checkScript(res, script, 0)
}

// CheckArgv is Check for a command run without a shell: argv is one
// command, its words taken as they are.
func (p Policy) CheckArgv(argv []string) error {
	res, err := p.compile()
	if err != nil || len(res) == 0 {
		return err
	}
	return checkWords(res, argv, 0)
}

func (p Policy) compile() ([]*regexp.Regexp, error) {
	res := make([]*regexp.Regexp, 0, len(p.Blocklist))
	for _, rule := range p.Blocklist {
		re, err := compileRule(rule)
		if err != nil {
			return nil, fmt.Errorf("sandbox policy: invalid blocklist rule %q: %w", rule, err)
		}
		res = append(res, re)
	}
	return res, nil
}

// maxNesting bounds how deep `bash -c "bash -c ..."` strings are parsed.
const maxNesting = 8

func checkScript(res []*regexp.Regexp, script string, depth int) error {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(script), "")
	if err != nil {
		return &PolicyError{Rule: "parse", Match: err.Error()}
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		if err != nil {
			return false
		}
		if call, ok := n.(*syntax.CallExpr); ok && len(call.Args) > 0 {
			words := make([]string, len(call.Args))
			for i, w := range call.Args {
				words[i] = wordText(w)
			}
			err = checkWords(res, words, depth)
		}
		return true
	})
	return err
}

// checkWords checks one simple command, then what it runs through a
// wrapper, then any script it hands to a shell.
func checkWords(res []*regexp.Regexp, words []string, depth int) error {
	for len(words) > 0 {
		// Rules name programs, wherever they are installed.
		text := strings.Join(append([]string{base(words[0])}, words[1:]...), " ")
		for _, re := range res {
			if loc := re.FindStringIndex(text); loc != nil {
				return &PolicyError{Rule: re.String(), Match: strings.TrimSpace(text[loc[0]:loc[1]])}
			}
		}
		if s, ok := shellString(words); ok {
			if depth >= maxNesting {
				return &PolicyError{Rule: "parse", Match: "shell strings nested too deep"}
			}
			return checkScript(res, s, depth+1)
		}
		words = unwrap(words)
	}
	return nil
}

// shellString returns the script a command hands to a shell: the string
// after -c for bash, sh and friends, and the joined arguments of eval.
func shellString(words []string) (string, bool) {
	switch base(words[0]) {
	case "eval":
		return strings.Join(words[1:], " "), len(words) > 1
	case "bash", "sh", "dash", "zsh", "ksh":
		for i := 1; i < len(words); i++ {
			w := words[i]
			switch {
			case w == "-o" || w == "+o" || w == "-O" || w == "+O":
				i++ // an option name
			case w == "" || w == "--" || w == "-" || (w[0] != '-' && w[0] != '+'):
				return "", false // a script file or the end of options
			case w[0] == '-' && w[1] != '-' && strings.Contains(w, "c") && i+1 < len(words):
				return words[i+1], true
			}
		}
	}
	return "", false
}

// unwrap returns the command a wrapper runs, or nil if words[0] is not a
// wrapper. Options are skipped approximately: those known to take a value
// skip it too.
func unwrap(words []string) []string {
	name := base(words[0])
	opts, ok := wrappers[name]
	if !ok {
		return nil
	}
	rest := words[1:]
	for len(rest) > 0 {
		w := rest[0]
		switch {
		case w == "--":
			return rest[1:]
		case strings.HasPrefix(w, "-") && len(w) > 1:
			rest = rest[1:]
			if strings.Contains(" "+opts+" ", " "+w+" ") && len(rest) > 0 {
				rest = rest[1:]
			}
		case name == "env" && strings.Contains(w, "="):
			rest = rest[1:]
		case name == "timeout":
			return rest[1:] // the duration
		default:
			return rest
		}
	}
	return nil
}

// wrappers maps the programs that run another command to their options
// that take a value.
var wrappers = map[string]string{
	"sudo": "-u -g -C -D -h -p -r -t -U -T", "doas": "-u -C",
	"env": "-u -C -S", "exec": "-a", "nice": "-n",
	"timeout": "-s -k", "xargs": "-a -d -E -I -L -n -P -s",
	"command": "", "builtin": "", "nohup": "", "time": "", "stdbuf": "-i -o -e",
}

// base is a program's name without its directory, so /usr/bin/git is git.
func base(prog string) string {
	if i := strings.LastIndexByte(prog, '/'); i >= 0 && i < len(prog)-1 {
		return prog[i+1:]
	}
	return prog
}

// wordText renders a word the way rules see it: quotes and escapes
// removed, a plain parameter as $NAME, anything else as bash prints it.
func wordText(w *syntax.Word) string {
	var b strings.Builder
	for _, part := range w.Parts {
		writePart(&b, part, false)
	}
	return b.String()
}

var plainParam = regexp.MustCompile(`^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$`)

func writePart(b *strings.Builder, part syntax.WordPart, inDouble bool) {
	switch p := part.(type) {
	case *syntax.Lit:
		b.WriteString(unescape(p.Value, inDouble))
	case *syntax.SglQuoted:
		b.WriteString(p.Value)
	case *syntax.DblQuoted:
		for _, q := range p.Parts {
			writePart(b, q, true)
		}
	default:
		var out strings.Builder
		syntax.NewPrinter().Print(&out, part)
		if m := plainParam.FindStringSubmatch(out.String()); m != nil {
			b.WriteString("$" + m[1])
			return
		}
		b.WriteString(out.String())
	}
}

// unescape removes the backslashes bash removes from literal text.
func unescape(s string, inDouble bool) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (!inDouble || strings.IndexByte("$`\"\\\n", s[i+1]) >= 0) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// rules caches compiled blocklist rules: a policy is checked before every
// command, and compiling its patterns each time cost more than starting
// a small process.
var rules sync.Map // string → *regexp.Regexp

func compileRule(rule string) (*regexp.Regexp, error) {
	if re, ok := rules.Load(rule); ok {
		return re.(*regexp.Regexp), nil
	}
	re, err := regexp.Compile(rule)
	if err != nil {
		return nil, err
	}
	rules.Store(rule, re)
	return re, nil
}
