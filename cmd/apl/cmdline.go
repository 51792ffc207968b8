package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/alecthomas/kong"
	"github.com/apl-lang/apl/lang"
)

// commandNode returns the node of a top-level command in kong's model.
func commandNode(k *kong.Kong, name string) *kong.Node {
	for _, n := range k.Model.Children {
		if n.Name == name {
			return n
		}
	}
	return nil
}

// nodeFlags lists the flags a command accepts: its own and its parents'
// (--help, --version).
func nodeFlags(n *kong.Node) []*kong.Flag {
	var flags []*kong.Flag
	for ; n != nil; n = n.Parent {
		flags = append(flags, n.Flags...)
	}
	return flags
}

// flagNames reports whether a name (without dashes) is a flag of command
// n, by its name, an alias or its short letter. An input cannot have
// such a flag.
func flagNames(n *kong.Node) func(string) bool {
	names := map[string]bool{}
	for _, f := range nodeFlags(n) {
		names[f.Name] = true
		for _, a := range f.Aliases {
			names[a] = true
		}
		if f.Short != 0 {
			names[string(f.Short)] = true
		}
	}
	return func(s string) bool { return names[s] }
}

// findPlaybook finds the playbook among apl run's arguments, before the
// playbook is loaded and so before its input flags are known. The run
// options' flags are known, and skipped with their values; of the words
// left, the playbook is the first that names a file, a directory or a
// stdlib playbook, else the first that looks like a path, else the first
// (whose loading then says what is wrong). An input flag before the playbook takes the word after it, as
// in apl run --phase 6.3 stdlib:phase-runner.
func findPlaybook(run *kong.Node, args []string) (string, bool) {
	takesValue := map[string]bool{}
	for _, f := range nodeFlags(run) {
		v := !f.IsBool() && !f.IsCounter()
		takesValue["--"+f.Name] = v
		for _, a := range f.Aliases {
			takesValue["--"+a] = v
		}
		if f.Short != 0 {
			takesValue["-"+string(f.Short)] = v
		}
	}
	var words []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			words = append(words, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "-") && a != "-":
			if !strings.Contains(a, "=") && takesValue[a] {
				i++
			}
		default:
			words = append(words, a)
		}
	}
	for _, w := range words {
		if strings.HasPrefix(w, lang.StdlibPrefix) {
			return w, true
		}
		if _, err := os.Stat(w); err == nil {
			return w, true
		}
	}
	// None exists: the one that looks most like a path is the playbook
	// whose loading says so.
	for _, w := range words {
		if strings.HasSuffix(w, ".hcl") || strings.ContainsRune(w, filepath.Separator) || strings.ContainsRune(w, '/') {
			return w, true
		}
	}
	if len(words) > 0 {
		return words[0], true
	}
	return "", false
}

var (
	unknownFlag = regexp.MustCompile(`^unknown flag (-[-\w]+)`)
	missingArg  = regexp.MustCompile(`^expected "(<[^"]+)"$`)
	unexpected  = regexp.MustCompile(`^unexpected argument (.+?)(?:, did you mean .*)?$`)
	// noValue matches kong's message for a flag without its value, and
	// inputValue's.
	noValue = regexp.MustCompile(`^(-[-\w]+)(?:=\S*)?: (?:expected \S+ value but got "(.*)" \(([^)]*)\).*|needs a value: (.*))$`)
)

// parseError rewrites kong's errors in apl's words: a flag without its
// value says so; on apl run, an unknown flag gets apl's suggestion, from
// the run options and the playbook's inputs, and the command that lists
// them, and a stray argument a hint.
func parseError(parser *kong.Kong, c *cli, err error) error {
	msg := err.Error()
	if m := noValue.FindStringSubmatch(msg); m != nil {
		switch {
		case m[4] != "":
			return fmt.Errorf("%s needs a value: %s", m[1], m[4])
		case m[3] == "<EOL>":
			return fmt.Errorf("%s needs a value: it is the last argument", m[1])
		default:
			return fmt.Errorf("%s needs a value: %s is a flag; to give a value that starts with -, write %s=%s", m[1], m[2], m[1], m[2])
		}
	}
	if m := missingArg.FindStringSubmatch(msg); m != nil {
		var pe *kong.ParseError
		if errors.As(err, &pe) && pe.Context != nil && pe.Context.Selected() != nil {
			path := pe.Context.Selected().FullPath()
			return fmt.Errorf("missing %s after %s; '%s --help' says more", m[1], path, path)
		}
	}
	if c.Run.ref == "" {
		return err
	}
	if m := unexpected.FindStringSubmatch(msg); m != nil {
		return c.Run.argError(m[1])
	}
	m := unknownFlag.FindStringSubmatch(msg)
	if m == nil {
		return err
	}
	var names []string
	for _, f := range nodeFlags(commandNode(parser, "run")) {
		if !f.Hidden {
			names = append(names, f.Name)
			names = append(names, f.Aliases...)
		}
	}
	hint := ""
	if s := lang.Suggest(strings.TrimLeft(m[1], "-"), names); s != "" {
		hint = fmt.Sprintf(" (did you mean --%s?)", s)
	}
	return fmt.Errorf("unknown flag %s%s; 'apl run %s --help' lists the flags", m[1], hint, shellQuote(c.Run.ref))
}
