package lang

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// Definition is one place an attribute is defined.
type Definition struct {
	Range hcl.Range
	// Text is the definition's source text: timeout = "20m".
	Text string
}

// Origin says where an attribute of the effective playbook comes from.
type Origin struct {
	// Addr is the attribute's address: step.verify.timeout.
	Addr string
	// Winner is the definition in effect; Overrode those it overrode,
	// nearest first (the fork's upstream, then the upstream's own).
	Winner   Definition
	Overrode []Definition
	// Template is the template whose body the winning definition is
	// written in, for an attribute of a step that uses one; "" when the
	// step's own body (or no template) wrote it.
	Template string
}

// Body returns the effective playbook's body: its files merged over the
// playbooks it extends. Every attribute and block keeps the range of the
// file that defines it.
func (p *Playbook) Body() *hclsyntax.Body {
	if p.body == nil {
		return &hclsyntax.Body{}
	}
	return p.body
}

// Explain returns where the attribute at addr comes from, or for a block's
// address where each of its attributes (and its nested blocks') comes
// from. An address (BlockAddress) is block types and labels and an
// attribute name joined by dots: step.verify.timeout,
// step.verify.gate.rule.pass.when, playbook.description. A removed block
// is reported as a Removal.
func (p *Playbook) Explain(addr string) ([]Origin, *Removal, error) {
	for i := range p.Removed {
		if r := &p.Removed[i]; r.Block == addr || strings.HasPrefix(addr, r.Block+".") {
			return nil, r, nil
		}
	}
	segs, err := SplitAddress(addr)
	if err != nil {
		return nil, nil, err
	}
	body := p.Body()
	prefix := ""
	for len(segs) > 0 {
		if len(segs) == 1 {
			if a := body.Attributes[segs[0]]; a != nil {
				return []Origin{p.origin(AttributeAddress(prefix, a.Name), a)}, nil, nil
			}
		}
		b, n := findBlock(body, segs)
		if b == nil {
			return nil, nil, fmt.Errorf("the playbook has no %s%s", AttributeAddress(prefix, strings.Join(segs, ".")), suggestUnder(prefix, body, segs))
		}
		prefix = BlockAddress(prefix, segs[0], segs[1:n]...)
		segs = segs[n:]
		body = b.Body
	}
	var out []Origin
	p.collect(prefix, body, &out)
	return out, nil, nil
}

// findBlock finds the block segs start with, and how many segments (type
// and labels) name it. A block of a type a playbook holds once may be
// named without its labels: playbook.description.
func findBlock(body *hclsyntax.Body, segs []string) (*hclsyntax.Block, int) {
	var ofType []*hclsyntax.Block
	for _, b := range body.Blocks {
		if b.Type == segs[0] {
			ofType = append(ofType, b)
		}
	}
	for _, b := range ofType {
		if n := 1 + len(b.Labels); n <= len(segs) && slices.Equal(b.Labels, segs[1:n]) {
			return b, n
		}
	}
	if len(ofType) == 1 && singletons[segs[0]] {
		return ofType[0], 1
	}
	return nil, 0
}

func suggestUnder(prefix string, body *hclsyntax.Body, segs []string) string {
	byLen := map[int][]string{}
	for n := range body.Attributes {
		byLen[1] = append(byLen[1], n)
	}
	for _, b := range body.Blocks {
		byLen[1+len(b.Labels)] = append(byLen[1+len(b.Labels)], BlockAddress("", b.Type, b.Labels...))
	}
	for k := len(segs); k >= 1; k-- {
		if s := Suggest(strings.Join(segs[:k], "."), byLen[k]); s != "" {
			return fmt.Sprintf("; did you mean %s?", AttributeAddress(prefix, s))
		}
	}
	return ""
}

func (p *Playbook) collect(prefix string, body *hclsyntax.Body, out *[]Origin) {
	attrs := make([]*hclsyntax.Attribute, 0, len(body.Attributes))
	for _, a := range body.Attributes {
		attrs = append(attrs, a)
	}
	sort.Slice(attrs, func(i, j int) bool { return attrs[i].Name < attrs[j].Name })
	for _, a := range attrs {
		*out = append(*out, p.origin(AttributeAddress(prefix, a.Name), a))
	}
	for _, b := range body.Blocks {
		p.collect(BlockAddress(prefix, b.Type, b.Labels...), b.Body, out)
	}
}

func (p *Playbook) origin(addr string, a *hclsyntax.Attribute) Origin {
	o := Origin{Addr: addr, Winner: p.definition(a.SrcRange)}
	if !strings.HasPrefix(addr, "template.") {
		o.Template = p.templateAttrs[a.SrcRange]
	}
	for _, r := range p.overrides[a.SrcRange] {
		o.Overrode = append(o.Overrode, p.definition(r))
	}
	return o
}

func (p *Playbook) definition(r hcl.Range) Definition {
	d := Definition{Range: r}
	if src, ok := p.Sources[r.Filename]; ok && r.End.Byte <= len(src) && r.Start.Byte <= r.End.Byte {
		d.Text = string(src[r.Start.Byte:r.End.Byte])
	}
	return d
}
