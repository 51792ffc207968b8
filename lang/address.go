package lang

import (
	"fmt"
	"strconv"
	"strings"
)

// An address names a block of a playbook, or an attribute of one: the
// block types and labels from the top of the file down, then the
// attribute's name, joined by dots. step.verify is the step "verify",
// step.verify.gate.rule.pass its gate's rule "pass", and
// step.verify.timeout that step's timeout. A label that holds a dot, a
// quote or a space, or is empty, is written as a quoted string:
// playbook."my playbook". apl explain reads addresses; apl diff and the
// diagnostics of a playbook that extends another write them, so a user can
// copy one from either into the other.

// BlockAddress is the address of a block of type typ with labels, under
// the block whose address is parent ("" for a top-level block).
func BlockAddress(parent, typ string, labels ...string) string {
	var b strings.Builder
	b.WriteString(parent)
	if parent != "" {
		b.WriteByte('.')
	}
	b.WriteString(typ)
	for _, l := range labels {
		b.WriteByte('.')
		b.WriteString(addressSegment(l))
	}
	return b.String()
}

// AttributeAddress is the address of attribute name of the block whose
// address is block ("" for the top level).
func AttributeAddress(block, name string) string {
	if block == "" {
		return name
	}
	return block + "." + name
}

// addressSegment writes a label as an address segment: as it is, or
// quoted when a dot or a quote in it would read otherwise.
func addressSegment(l string) string {
	if l == "" || strings.ContainsAny(l, ". \t\n\"") {
		return strconv.Quote(l)
	}
	return l
}

// SplitAddress splits an address into its segments, unquoting the quoted
// ones: step."a.b".timeout is step, a.b and timeout.
func SplitAddress(addr string) ([]string, error) {
	var segs []string
	rest := addr
	for {
		var seg string
		if strings.HasPrefix(rest, `"`) {
			q, err := strconv.QuotedPrefix(rest)
			if err != nil {
				return nil, fmt.Errorf("address %s: a quoted label does not end", addr)
			}
			seg, _ = strconv.Unquote(q)
			rest = rest[len(q):]
		} else {
			i := strings.IndexByte(rest, '.')
			if i < 0 {
				i = len(rest)
			}
			seg, rest = rest[:i], rest[i:]
			if seg == "" {
				return nil, fmt.Errorf("address %q has an empty part; an address is like step.verify.timeout", addr)
			}
		}
		segs = append(segs, seg)
		if rest == "" {
			return segs, nil
		}
		if rest[0] != '.' {
			return nil, fmt.Errorf("address %s: a dot must follow a quoted label", addr)
		}
		rest = rest[1:]
	}
}
