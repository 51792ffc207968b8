package lang

import (
	"fmt"
	"slices"
	"strings"

	"github.com/expr-lang/expr/ast"
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

var limitSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "key", Required: true},
		{Name: "max", Required: true},
		{Name: "default"},
	},
}

// ForEach runs a body of steps once per item of a list computed at run
// time, as a task graph: items wait for the items they depend on, and at
// most Concurrency run at once, within each Limit.
type ForEach struct {
	List        *Condition // expr yielding a list
	Key         *Condition // expr over item yielding its key; nil: the index
	DependsOn   *Condition // expr over item yielding keys it waits for
	Priority    *Condition // expr over item; lower runs first
	Concurrency int
	// ConcurrencyFrom, when concurrency reads inputs, is the setting a run
	// fixes it from; Concurrency is then its value under the defaults.
	ConcurrencyFrom *Setting
	// OnItemFailure says what a failed item does to the step: ItemFailAtEnd
	// (the default), ItemFailFast or ItemFailContinue.
	OnItemFailure string
	Limits        []*Limit
	Steps         []*Step
	// ReleaseFrom is the nested step marked release_slot, if any: an item
	// that reaches it, or a step declared after it, holds no concurrency
	// slot and no place in a limit until a requeue sends it back to the
	// queue.
	ReleaseFrom *Step
	// ItemType is the declared type of an item, when the list's type is
	// known; cty.DynamicPseudoType otherwise.
	ItemType cty.Type
}

// The values of a for_each step's on_item_failure.
const (
	// ItemFailAtEnd runs every item that can run, then fails the step if
	// any failed.
	ItemFailAtEnd = "at_end"
	// ItemFailFast starts no new item once one failed; the running ones
	// end their bodies, then the step fails.
	ItemFailFast = "fail_fast"
	// ItemFailContinue completes the step whatever its items came to; a
	// gate routes on the counts.
	ItemFailContinue = "continue"
)

// ItemFailures lists on_item_failure's values, in the order messages give
// them.
var ItemFailures = []string{ItemFailAtEnd, ItemFailFast, ItemFailContinue}

// Limit caps how many items with the same key run at once.
type Limit struct {
	Name    string
	Key     *Condition
	Max     map[string]int
	Default int // for keys not in Max; 0: no cap
	// MaxFrom and DefaultFrom, when max or default read inputs, are the
	// settings a run fixes them from; Max and Default are then their
	// values under the inputs' defaults.
	MaxFrom, DefaultFrom *Setting
}

// decodeForEach reads a for_each step's attributes and limit blocks. The
// list is an expr-lang expression in the step's own section; key,
// depends_on, priority and limit keys are evaluated per item.
func (l *loader) decodeForEach(s *Step, content *hcl.BodyContent, outer *condEnv) hcl.Diagnostics {
	var diags hcl.Diagnostics
	fe := s.ForEach
	if a := content.Attributes["for_each"]; a != nil {
		c, d := l.decodeExpr(a, outer)
		diags = append(diags, d...)
		fe.List = c
		l.noteConditionRefs(c)
		if c != nil {
			if t := l.staticType(c.Program.Node(), s.Parent); t != cty.NilType && (t.IsListType() || t.IsSetType()) {
				fe.ItemType = t.ElementType()
			}
		}
	}
	body := l.condEnv(Scope{Body: s})
	for name, dst := range map[string]**Condition{"key": &fe.Key, "depends_on": &fe.DependsOn, "priority": &fe.Priority} {
		if a := content.Attributes[name]; a != nil {
			c, d := l.decodeExpr(a, body)
			diags = append(diags, d...)
			*dst = c
		}
	}
	if a := content.Attributes["concurrency"]; a != nil {
		if len(a.Expr.Variables()) > 0 {
			set, f, d := l.decodeSetting(a, s.Name+".concurrency", SettingCount)
			diags = append(diags, d...)
			fe.ConcurrencyFrom, fe.Concurrency = set, max(f.N, 1)
		} else {
			n, d := constPositiveInt(a)
			diags = append(diags, d...)
			fe.Concurrency = n
		}
	}
	fe.OnItemFailure = ItemFailAtEnd
	if a := content.Attributes["on_item_failure"]; a != nil {
		v, d := constString(a)
		diags = append(diags, d...)
		if !d.HasErrors() {
			if slices.Contains(ItemFailures, v) {
				fe.OnItemFailure = v
			} else {
				diags = append(diags, errDiag("Invalid on_item_failure",
					fmt.Sprintf("on_item_failure is one of %s, not %q.%s", strings.Join(ItemFailures, ", "), v, didYouMean(v, ItemFailures)), a.Expr.Range()))
			}
		}
	}
	seen := map[string]bool{}
	for _, b := range content.Blocks {
		if b.Type != "limit" {
			continue
		}
		name := b.Labels[0]
		if seen[name] {
			diags = append(diags, errDiag("Duplicate limit", fmt.Sprintf("Limit %q is declared twice in step %q.", name, s.Name), b.LabelRanges[0]))
		}
		seen[name] = true
		lc, d := b.Body.Content(limitSchema)
		diags = append(diags, d...)
		lim := &Limit{Name: name, Max: map[string]int{}}
		if a := lc.Attributes["key"]; a != nil {
			c, d := l.decodeExpr(a, body)
			diags = append(diags, d...)
			lim.Key = c
		}
		if a := lc.Attributes["max"]; a != nil && len(a.Expr.Variables()) > 0 {
			set, f, d := l.decodeSetting(a, s.Name+".limit."+name+".max", SettingCaps)
			diags = append(diags, d...)
			lim.MaxFrom = set
			if f.Caps != nil {
				lim.Max = f.Caps
			}
		} else if a != nil {
			v, d := constValue(a)
			diags = append(diags, d...)
			if !d.HasErrors() {
				if v.IsNull() || !(v.Type().IsObjectType() || v.Type().IsMapType()) {
					diags = append(diags, errDiag("Invalid limit", `max maps key values to caps, e.g. max = { haiku = 5, sonnet = 3, opus = 1 }.`, a.Expr.Range()))
				} else {
					for it := v.ElementIterator(); it.Next(); {
						k, ev := it.Element()
						n, ok := wholeNumber(ev)
						if !ok || n < 1 {
							diags = append(diags, errDiag("Invalid limit", fmt.Sprintf("The cap for %q must be a whole number of at least 1.", k.AsString()), a.Expr.Range()))
							continue
						}
						lim.Max[k.AsString()] = n
					}
				}
			}
		}
		if a := lc.Attributes["default"]; a != nil && len(a.Expr.Variables()) > 0 {
			set, f, d := l.decodeSetting(a, s.Name+".limit."+name+".default", SettingCount)
			diags = append(diags, d...)
			lim.DefaultFrom, lim.Default = set, f.N
		} else if a != nil {
			n, d := constPositiveInt(a)
			diags = append(diags, d...)
			lim.Default = n
		}
		fe.Limits = append(fe.Limits, lim)
	}
	return diags
}

func wholeNumber(v cty.Value) (int, bool) {
	if v.IsNull() || v.Type() != cty.Number || !v.AsBigFloat().IsInt() {
		return 0, false
	}
	n, _ := v.AsBigFloat().Int64()
	return int(n), true
}

// staticType is the type of a chain of names such as
// steps.plan.output.tasks or inputs.commands in the section of body, as
// its scope types it; cty.NilType when it is not such a chain.
func (l *loader) staticType(n ast.Node, body *Step) cty.Type {
	var path []string
	for {
		switch x := n.(type) {
		case *ast.MemberNode:
			prop, ok := x.Property.(*ast.StringNode)
			if !ok {
				return cty.NilType
			}
			path = append([]string{prop.Value}, path...)
			n = x.Node
			continue
		case *ast.IdentifierNode:
			path = append([]string{x.Value}, path...)
		default:
			return cty.NilType
		}
		break
	}
	return l.pathType(Scope{Body: body}, path)
}
