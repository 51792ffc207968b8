package lang

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// A Local is a named value of the playbook (locals { NAME = EXPR }),
// read as local.NAME in both languages. It is derived, never stored: the
// interpreter evaluates it from the run's records each time an expression
// reads it, so it can parse a step's output once for many readers
// without a gate's set.
type Local struct {
	Name string
	Expr hcl.Expression
	// Type is what the expression yields, inferred when the playbook
	// loads from the types of what it reads; DynamicPseudoType when that
	// cannot be told.
	Type cty.Type
	// Step is the step whose locals block declares the local; nil for the
	// playbook's own.
	Step *Step
	// Late is set on a step's local that reads the step's own record
	// (steps.STEP or self), itself or through another of its locals: it
	// is derived each time it is read, as a playbook's local is, so that
	// the step's checks and gate see what the action gave; null where it
	// cannot be evaluated (in the action, before there is an output).
	Late      bool
	DeclRange hcl.Range
}

// declareLocals reads every locals block (a playbook may have several;
// names are unique across them), then orders the locals so that each
// comes after those it reads, and infers their types. It runs after the
// steps are declared (their returns types are known) and before any
// condition compiles (conditions are typed against the locals).
func (l *loader) declareLocals(blocks []*hcl.Block) hcl.Diagnostics {
	locals, byName, diags := l.orderLocals(blocks, nil)
	l.pb.Locals, l.pb.locals = locals, byName
	if len(locals) == 0 {
		return diags
	}
	ctx := l.inferContext(nil)
	for _, lv := range l.pb.Locals {
		lv.Type = inferType(lv.Expr, l.traversals(lv.Expr), ctx, l.pb.Locals)
		l.deferRefs(lv.Expr, refScope{vars: true, what: "a local value"})
	}
	return diags
}

// declareStepLocals reads the locals blocks of step s: values named
// when the step starts, which may read item and the step's section, and
// which only the step's own expressions see. It runs when the step's
// body is decoded, after its for_each parent fixed the item type.
func (l *loader) declareStepLocals(s *Step, blocks []*hcl.Block) hcl.Diagnostics {
	if len(blocks) == 0 {
		return nil
	}
	if s.ForEach != nil {
		return hcl.Diagnostics{errDiag("locals on a for_each step",
			fmt.Sprintf("for_each step %q runs its nested steps per item; declare the locals in the nested step that uses them, or at the top level of the playbook.", s.Name), blocks[0].DefRange)}
	}
	locals, byName, diags := l.orderLocals(blocks, s)
	s.Locals, s.locals = locals, byName
	for _, lv := range s.Locals { // each after those it reads
		for _, tr := range l.traversals(lv.Expr) {
			switch tr.RootName() {
			case RootSteps:
				if names := attrNames(tr[1:]); len(names) > 0 && names[0] == s.Name {
					lv.Late = true
				}
			case RootLocal:
				if names := attrNames(tr[1:]); len(names) > 0 && byName[names[0]] != nil && byName[names[0]].Late {
					lv.Late = true
				}
			}
		}
	}
	ctx, visible := l.inferContext(s.Parent), slices.Concat(l.pb.Locals, s.Locals)
	for _, lv := range s.Locals {
		lv.Type = inferType(lv.Expr, l.traversals(lv.Expr), ctx, visible)
		l.deferRefs(lv.Expr, refScope{vars: true, body: s.Parent, step: s, what: "a local value"})
	}
	return diags
}

// orderLocals decodes locals blocks into locals ordered so that each
// comes after those it reads. owner is the step the blocks belong to,
// nil for the playbook's; a step's local may not take the name of one of
// the playbook's.
func (l *loader) orderLocals(blocks []*hcl.Block, owner *Step) ([]*Local, map[string]*Local, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	byName := map[string]*Local{}
	for _, b := range blocks {
		attrs, d := b.Body.JustAttributes()
		diags = append(diags, d...)
		for _, key := range slices.Sorted(maps.Keys(attrs)) {
			a, name := attrs[key], key
			if b.Type == argsBlock {
				// A template's argument: a local no one can write.
				name = argLocal(key)
			} else if !hclIdent(name) {
				diags = append(diags, errDiag("Invalid name",
					fmt.Sprintf("A local's name is letters, digits and underscores, not starting with a digit; %q is not.", name), a.NameRange))
				continue
			}
			prev := byName[name]
			if prev == nil && owner != nil {
				prev = l.pb.locals[name]
			}
			if prev != nil {
				diags = append(diags, errDiag("Duplicate local",
					fmt.Sprintf("Local %q is already declared at %s.", name, prev.DeclRange), a.NameRange))
				continue
			}
			byName[name] = &Local{Name: name, Expr: a.Expr, Type: cty.DynamicPseudoType, Step: owner, DeclRange: a.Range}
		}
	}
	// Depth-first in name order: each local after what it reads, and a
	// cycle reported once, where it closes.
	var out []*Local
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(lv *Local, path []string)
	visit = func(lv *Local, path []string) {
		switch state[lv.Name] {
		case 1:
			i := slices.Index(path, lv.Name)
			diags = append(diags, errDiag("Cycle in locals",
				fmt.Sprintf("Local %q reads itself: %s.", lv.Name, strings.Join(append(path[i:], lv.Name), " → ")), lv.DeclRange))
			return
		case 2:
			return
		}
		state[lv.Name] = 1
		for _, dep := range localRefs(l.traversals(lv.Expr)) {
			if d := byName[dep]; d != nil {
				visit(d, append(path, lv.Name))
			}
		}
		state[lv.Name] = 2
		out = append(out, lv)
	}
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		visit(byName[name], nil)
	}
	return out, byName, diags
}

// localRefs lists the locals an expression reads (local.NAME), given
// its traversals.
func localRefs(trs []hcl.Traversal) []string {
	var out []string
	for _, tr := range trs {
		if tr.RootName() != RootLocal {
			continue
		}
		if names := attrNames(tr[1:]); len(names) > 0 && !slices.Contains(out, names[0]) {
			out = append(out, names[0])
		}
	}
	return out
}

// inferType evaluates e, whose traversals are trs, in ctx (from
// inferContext) with the locals it may read, those typed so far with
// their types, and returns the type of the
// result: HCL's own type checking, run without running anything. What
// cannot be told is DynamicPseudoType.
//
// Only the locals e names are given (all when it reads local otherwise
// than local.NAME): giving every visible one to each local made typing a
// playbook's locals quadratic in their number.
func inferType(e hcl.Expression, trs []hcl.Traversal, ctx *hcl.EvalContext, visible []*Local) cty.Type {
	var names []string
	all := false
	for _, tr := range trs {
		if tr.RootName() != RootLocal {
			continue
		}
		if len(tr) < 2 {
			all = true
			continue
		}
		if a, ok := tr[1].(hcl.TraverseAttr); ok {
			names = append(names, a.Name)
		} else {
			all = true
		}
	}
	locals := map[string]cty.Value{}
	for _, lv := range visible {
		if all || slices.Contains(names, lv.Name) {
			locals[lv.Name] = unknownOf(lv.Type)
		}
	}
	ctx.Variables[RootLocal] = cty.ObjectVal(locals)
	return typeOf(e, ctx)
}

// typeOf is the type of e's value in ctx. HCL gives up on a for
// expression over an unknown collection (the commonest local: parse a
// step's output, then shape each match); typeOf types its elements
// instead, as a list (or a map with a key expression).
func typeOf(e hcl.Expression, ctx *hcl.EvalContext) cty.Type {
	if f, ok := e.(*hclsyntax.ForExpr); ok {
		coll := typeOf(f.CollExpr, ctx)
		var elem, key cty.Type
		switch {
		case coll.IsListType() || coll.IsSetType():
			elem, key = coll.ElementType(), cty.Number
		case coll.IsMapType():
			elem, key = coll.ElementType(), cty.String
		default:
			return valueType(e, ctx)
		}
		child := ctx.NewChild()
		child.Variables = map[string]cty.Value{f.ValVar: cty.UnknownVal(elem)}
		if f.KeyVar != "" {
			child.Variables[f.KeyVar] = cty.UnknownVal(key)
		}
		val := typeOf(f.ValExpr, child)
		if f.Group {
			val = cty.List(val)
		}
		if f.KeyExpr != nil {
			return cty.Map(val)
		}
		return cty.List(val)
	}
	return valueType(e, ctx)
}

func valueType(e hcl.Expression, ctx *hcl.EvalContext) cty.Type {
	v, diags := e.Value(ctx)
	if diags.HasErrors() || v == cty.NilVal {
		return cty.DynamicPseudoType
	}
	return v.Type()
}

// checkLocalRef checks local.NAME and the attributes read below it
// against the local's inferred type. step is the step whose expression
// reads it (nil outside a step): its own locals are visible to it, and
// no other step's.
func (l *loader) checkLocalRef(attrs []string, rng hcl.Range, step *Step) hcl.Diagnostics {
	if len(attrs) == 0 {
		return nil
	}
	lv := l.pb.locals[attrs[0]]
	if lv == nil && step != nil {
		lv = step.locals[attrs[0]]
	}
	if lv == nil {
		if owner := l.stepLocalOwner(attrs[0]); owner != nil {
			return hcl.Diagnostics{errDiag("Reference to another step's local",
				fmt.Sprintf("Local %q is declared in step %q, and only that step's own expressions (its action, checks, gate and progress templates, not its when or skip_reason) see it. Declare it where it is read, or in the playbook's locals if it does not read item.", attrs[0], owner.Name), rng)}
		}
		names := slices.Sorted(maps.Keys(l.pb.locals))
		if step != nil {
			names = slices.Sorted(slices.Values(slices.Concat(names, slices.Collect(maps.Keys(step.locals)))))
		}
		return hcl.Diagnostics{errDiag("Reference to undeclared local",
			fmt.Sprintf("There is no local named %q.%s", attrs[0], didYouMean(attrs[0], names)), rng)}
	}
	t, path := lv.Type, "local."+lv.Name
	for _, a := range attrs[1:] {
		if !t.IsObjectType() {
			return nil
		}
		if !t.HasAttribute(a) {
			return hcl.Diagnostics{errDiag("Unknown local field",
				fmt.Sprintf("%s has no field %q: it is %s.%s", path, a, typeString(t),
					didYouMean(a, slices.Sorted(maps.Keys(t.AttributeTypes())))), rng)}
		}
		t = t.AttributeType(a)
		path += "." + a
	}
	return nil
}

// stepLocalOwner is the first step, in declared order, with a local of
// the given name; nil if none has one.
func (l *loader) stepLocalOwner(name string) *Step {
	for _, s := range l.pb.AllSteps() {
		if s.locals[name] != nil {
			return s
		}
	}
	return nil
}

// Local returns the playbook's local with the given name, or nil.
func (p *Playbook) Local(name string) *Local { return p.locals[name] }
