package builtins

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// Policy is the sandbox rule set a Shell applies before it starts anything.
// It guards against the accidents the seed protocols forbid ("Sandbox
// Execution Policy" in seed 000); it is not a security boundary, since a
// determined script can always spell a command in a way no pattern sees.
type Policy struct {
	// Blocklist holds Go regular expressions (RE2 syntax). A command whose
	// text matches any of them is refused. For an argv command the text is
	// the arguments joined by single spaces; for a script it is the script.
	Blocklist []string
}

// DefaultPolicy refuses what the seeds name: `git reset --hard` (they
// require `git revert` so history survives), global package installs, sudo,
// and removing the root or home directory. The patterns stop at ; & | and
// newlines so they judge one simple command at a time, and they tolerate
// extra flags and spacing ("git -C x reset -q --hard").
var DefaultPolicy = Policy{Blocklist: []string{
	`\bgit\b[^;&|\n]*\sreset\b[^;&|\n]*\s--hard\b`,
	`\b(?:npm|pnpm)\b[^;&|\n]*\s(?:i|install|add|link)\b[^;&|\n]*\s(?:-g|--global|--location[= ]global)\b`,
	`\b(?:npm|pnpm)\s+(?:-g|--global|--location[= ]global)\b[^;&|\n]*\s(?:i|install|add|link)\b`,
	`\byarn\s+global\s+add\b`,
	`(?:^|[\s;&|(` + "`" + `])sudo\s`,
	`\brm\s+(?:-\S+\s+)*(?:/|/\*|~/?|\$HOME/?|"\$HOME"/?)(?:$|[\s;&|)])`,
}}

// PolicyError reports a command the Policy refused. It is a distinct type
// so the interpreter can fail the step with the rule in the message instead
// of treating the refusal like a crash.
type PolicyError struct {
	// Rule is the blocklist pattern that matched.
	Rule string
	// Match is the part of the command the rule matched.
	Match string
}

func (e *PolicyError) Error() string {
	return fmt.Sprintf("sandbox policy refuses the command: %q matches blocklist rule `%s`", e.Match, e.Rule)
}

// Check returns a *PolicyError if command matches a blocklist rule, and a
// plain error if a rule is not a valid regular expression, so a typo in a
// policy fails loudly instead of letting everything through.
func (p Policy) Check(command string) error {
	for _, rule := range p.Blocklist {
		re, err := compileRule(rule)
		if err != nil {
			return fmt.Errorf("sandbox policy: invalid blocklist rule %q: %w", rule, err)
		}
		if loc := re.FindStringIndex(command); loc != nil {
			return &PolicyError{Rule: rule, Match: strings.TrimSpace(command[loc[0]:loc[1]])}
		}
	}
	return nil
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
