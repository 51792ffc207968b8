package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/alecthomas/kong"
	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/lang"
	"github.com/apl-lang/apl/stdlib"
)

type completionCmd struct {
	Shell string `arg:"" enum:"bash,zsh,fish" help:"bash, zsh or fish."`
}

// completeCommand is the hidden command the completion scripts call:
// apl __complete WORDS... CURRENT prints the candidates for CURRENT, one a
// line. Main handles it before kong, which would read the words' flags as
// its own.
const completeCommand = "__complete"

// The scripts ask apl for the candidates, so that a playbook's inputs are
// completed as flags once the playbook is on the line. With none, the
// shell completes file names.
var completionScripts = map[string]string{
	"bash": `# bash completion for apl. Load it with:  source <(apl completion bash)
_apl() {
    local IFS=$'\n'
    COMPREPLY=($(apl __complete "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
}
complete -o default -F _apl apl
`,
	"zsh": `#compdef apl
# zsh completion for apl. Load it with:  source <(apl completion zsh)
# (after compinit), or save it as _apl in a directory of your fpath.
_apl() {
    local -a cands
    cands=("${(@f)$(apl __complete "${(@)words[2,CURRENT]}" 2>/dev/null)}")
    if [[ -n "${cands[1]}" ]]; then
        compadd -a cands
    else
        _files
    fi
}
if [[ "${funcstack[1]}" = "_apl" ]]; then
    _apl "$@"
else
    compdef _apl apl
fi
`,
	"fish": `# fish completion for apl. Load it with:  apl completion fish | source
function __apl_complete
    set -l words (commandline -opc) (commandline -ct)
    apl __complete $words[2..-1] 2>/dev/null
end
complete -c apl -f -n 'test (count (__apl_complete)) -gt 0' -a '(__apl_complete)'
complete -c apl -F -n 'test (count (__apl_complete)) -eq 0'
`,
}

func (c *completionCmd) Run(e *env) error {
	fmt.Fprint(e.stdout, completionScripts[c.Shell])
	return nil
}

// complete prints the candidates for the last of words (the word being
// typed, maybe empty), given the words before it.
func complete(w io.Writer, e *env, words []string) {
	cur := ""
	if len(words) > 0 {
		cur, words = words[len(words)-1], words[:len(words)-1]
	}
	var c cli
	parser, err := newParser(&c, io.Discard, io.Discard, func(int) {})
	if err != nil {
		return
	}
	// The command: the first word, and for stdlib the second.
	node := parser.Model.Node
	rest := words
	for len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		child := childNode(node, rest[0])
		if child == nil {
			break
		}
		node, rest = child, rest[1:]
	}
	var cands []string
	switch {
	case node == parser.Model.Node || node.Name == "help":
		if strings.HasPrefix(cur, "-") && node == parser.Model.Node {
			cands = flagCandidates(node)
		} else if len(rest) == 0 {
			cands = commandCandidates(parser.Model.Node)
		}
	case len(node.Children) > 0 && len(rest) == 0 && !strings.HasPrefix(cur, "-"):
		cands = commandCandidates(node) // apl stdlib list|show
	case len(rest) > 0 && valueFlag(node, rest[len(rest)-1]) != nil:
		// The value of a flag: its enum, or the playbook's modes.
		f := valueFlag(node, rest[len(rest)-1])
		cands = f.EnumSlice()
		if f.Name == "mode" && node.Name == "run" {
			if pb := completionPlaybook(e, node, rest); pb != nil {
				for name := range pb.Modes {
					cands = append(cands, name)
				}
				slices.Sort(cands)
			}
		}
	case strings.HasPrefix(cur, "-"):
		cands = flagCandidates(node)
		if node.Name == "run" {
			if pb := completionPlaybook(e, node, rest); pb != nil {
				for i := range pb.Inputs {
					for _, f := range newInputFlags(pb, flagNames(node)).flags[i] {
						cands = append(cands, "--"+f)
					}
				}
			}
		}
	default:
		cands = argCandidates(node, cur)
	}
	for _, s := range cands {
		if s != "" && strings.HasPrefix(s, cur) {
			fmt.Fprintln(w, s)
		}
	}
}

// childNode returns the subcommand of n with name, or nil.
func childNode(n *kong.Node, name string) *kong.Node {
	for _, c := range n.Children {
		if c.Name == name && c.Type == kong.CommandNode {
			return c
		}
	}
	return nil
}

func commandCandidates(n *kong.Node) []string {
	var out []string
	for _, c := range n.Children {
		if !c.Hidden {
			out = append(out, c.Name)
		}
	}
	return out
}

func flagCandidates(n *kong.Node) []string {
	var out []string
	for _, f := range nodeFlags(n) {
		if !f.Hidden {
			out = append(out, "--"+f.Name)
		}
	}
	return out
}

// valueFlag returns the flag that word is, when it takes a value given
// after a space, or nil.
func valueFlag(n *kong.Node, word string) *kong.Flag {
	if !strings.HasPrefix(word, "-") || strings.Contains(word, "=") {
		return nil
	}
	name := strings.TrimLeft(word, "-")
	for _, f := range nodeFlags(n) {
		if (f.Name == name || slices.Contains(f.Aliases, name) || f.Short != 0 && string(f.Short) == name) && !f.IsBool() && !f.IsCounter() {
			return f
		}
	}
	return nil
}

// argCandidates are the candidates for a command's argument, other than
// file names, which the shell completes.
func argCandidates(n *kong.Node, cur string) []string {
	switch n.Name {
	case "completion":
		return []string{"bash", "fish", "zsh"}
	case "show":
		return stdlib.Names()
	case "resume":
		runs, _ := os.ReadDir(interp.RunsDir("."))
		var out []string
		for _, r := range runs {
			out = append(out, r.Name())
		}
		return out
	case "run", "validate", "graph", "test":
		if strings.HasPrefix(cur, "stdlib:") {
			var out []string
			for _, name := range stdlib.Names() {
				out = append(out, "stdlib:"+name)
			}
			return out
		}
	}
	return nil
}

// completionPlaybook loads the playbook on an apl run line, if there is
// one that loads; nothing is printed.
func completionPlaybook(e *env, run *kong.Node, args []string) *lang.Playbook {
	ref, ok := findPlaybook(run, args)
	if !ok {
		return nil
	}
	if _, err := os.Stat(ref); err != nil && !strings.HasPrefix(ref, "stdlib:") {
		return nil
	}
	pb, diags := e.loader.Load(ref)
	if diags.HasErrors() {
		return nil
	}
	return pb
}
