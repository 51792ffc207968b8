package lang

import (
	"maps"
	"slices"
	"time"

	"github.com/expr-lang/expr/checker/nature"
	"github.com/expr-lang/expr/types"
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// A Scope is a place in a playbook as far as it decides what an
// expression there sees: which names (roots) exist, and the type of
// each. The loader compiles conditions, type-checks value expressions
// and infers the locals' types against one description of it
// (rootTypes); the interpreter builds the values of the same roots
// (Roots) from the run's records.
type Scope struct {
	// Body is the for_each step whose body holds the expression, or
	// whose per-item attribute (key, depends_on, priority, a limit's
	// key) it is; nil outside every body. Only there do item and
	// item_attempt exist, and steps.NESTED name the item's nested steps.
	// A body belongs to a for_each step by construction (only a
	// for_each step holds nested steps), so a Body has a ForEach.
	Body *Step
	// Step is the step whose own expression this is, evaluated once its
	// locals are (its action, checks, gate and progress templates): it
	// sees them in local besides the playbook's. nil for a step's when
	// and skip_reason, and outside steps.
	Step *Step
	// Input is the input whose validation condition this is: it sees
	// only value and inputs.
	Input *Input
}

var (
	mainRoots       = []string{RootInputs, RootSteps, RootRun, RootVars, RootLocal}
	bodyRoots       = []string{RootInputs, RootSteps, RootRun, RootVars, RootLocal, RootItem, RootItemAttempt}
	validationRoots = []string{RootValue, RootInputs}
)

// Roots lists the names an expression in sc may start with, in the
// order messages give them. The list is shared: callers must not change
// it.
func (sc Scope) Roots() []string {
	switch {
	case sc.Input != nil:
		return validationRoots
	case sc.Body != nil:
		return bodyRoots
	}
	return mainRoots
}

// normal is sc as far as types tell scopes apart: a step without locals
// of its own sees what its section sees.
func (sc Scope) normal() Scope {
	if sc.Step != nil && len(sc.Step.Locals) == 0 && sc.Step.Template == "" {
		sc.Step = nil
	}
	return sc
}

// rootType is the type of a name as each language sees it: value
// expressions are checked against unknown values of hcl, conditions are
// compiled against cond. Both are made together, from one cty type, so
// they cannot disagree: cond only adds that some numbers are whole (int),
// and that vars may hold any name (varsType).
type rootType struct {
	hcl  cty.Type
	cond types.Type
}

// rootTypeOf is t in both languages; an unknown type is any.
func rootTypeOf(t cty.Type) rootType {
	if t == cty.NilType {
		t = cty.DynamicPseudoType
	}
	return rootType{t, exprType(t)}
}

func (f Field) rootType() rootType { return rootType{f.Type, f.exprType()} }

// objectOf is an object of the given attributes, in both languages.
func objectOf(attrs map[string]rootType) rootType {
	h := make(map[string]cty.Type, len(attrs))
	c := make(types.Map, len(attrs))
	for name, a := range attrs {
		h[name], c[name] = a.hcl, a.cond
	}
	return rootType{cty.Object(h), c}
}

// withFields is an object of fields (StepFields, RunFields) and extra.
func withFields(fields map[string]Field, extra map[string]rootType) rootType {
	m := make(map[string]rootType, len(fields)+len(extra))
	for name, f := range fields {
		m[name] = f.rootType()
	}
	maps.Copy(m, extra)
	return objectOf(m)
}

// rootTypes describes sc: each of its roots with its type. All but local
// and vars depend only on the section (sc.Body) and are built once per
// section; local and vars are built for each call, since the locals' own
// types are inferred against a scope, and vars' names are known only
// once every step is decoded.
func (l *loader) rootTypes(sc Scope) map[string]rootType {
	if sc.Input != nil {
		return map[string]rootType{RootValue: rootTypeOf(sc.Input.Type), RootInputs: l.section(nil).roots[RootInputs]}
	}
	m := maps.Clone(l.section(sc.Body).roots)
	m[RootLocal] = l.localsType(sc.Step)
	m[RootVars] = l.varsType()
	return m
}

// sectionTypes are the roots of a section but local and vars, with what
// is derived from their types: their unknown values and their expr
// natures, each made once. A section's steps object holds every step's
// fields, so making them again for each scope of the section (each step
// with locals of its own, each for_each body) cost a tenth of a load.
type sectionTypes struct {
	roots    map[string]rootType
	unknowns map[string]cty.Value
	natures  map[string]nature.Nature
	// steps are the steps of roots[RootSteps], whose unknown value and
	// nature are made from each step's, made once per load (stepType):
	// every section sees the main steps.
	steps map[string]*stepType
}

// unknown is the unknown value of root, made once.
func (s *sectionTypes) unknown(root string) cty.Value {
	v, ok := s.unknowns[root]
	if ok {
		return v
	}
	if root == RootSteps {
		// unknownOf(roots[RootSteps].hcl), an object without optional
		// attributes of its own, from each step's.
		attrs := make(map[string]cty.Type, len(s.steps))
		for name, st := range s.steps {
			attrs[name] = st.deep
		}
		v = cty.UnknownVal(cty.Object(attrs))
	} else {
		v = unknownOf(s.roots[root].hcl)
	}
	s.unknowns[root] = v
	return v
}

// nature is root's type as expr sees it, made once.
func (s *sectionTypes) nature(root string) nature.Nature {
	n, ok := s.natures[root]
	if ok {
		return n
	}
	if root == RootSteps {
		n = mapNature(s.roots[root].cond.(types.Map), func(name string) (nature.Nature, bool) {
			if st := s.steps[name]; st != nil {
				return st.nature(), true
			}
			return nature.Nature{}, false
		})
	} else {
		n = s.roots[root].cond.Nature()
	}
	s.natures[root] = n
	return n
}

// stepType is steps.NAME's type in both languages, with the type of its
// unknown value and its nature, made once per load.
type stepType struct {
	rt   rootType
	deep cty.Type // rt.hcl without optional attributes, at any depth
	nat  *nature.Nature
}

func (st *stepType) nature() nature.Nature {
	if st.nat == nil {
		n := st.rt.cond.Nature()
		st.nat = &n
	}
	return *st.nat
}

// stepType is s's. Sections are described once every step's action is
// decoded (outputType), so a step's type does not change after.
func (l *loader) stepType(s *Step) *stepType {
	if st, ok := l.stepTypes[s]; ok {
		return st
	}
	rt := withFields(StepFields, map[string]rootType{"output": rootTypeOf(l.outputType(s))})
	st := &stepType{rt: rt, deep: rt.hcl.WithoutOptionalAttributesDeep()}
	if l.stepTypes == nil {
		l.stepTypes = map[*Step]*stepType{}
	}
	l.stepTypes[s] = st
	return st
}

// section is what every expression in the section of body (nil: the
// main, on_failure and finally steps) sees, but for local and vars.
func (l *loader) section(body *Step) *sectionTypes {
	if s, ok := l.sections[body]; ok {
		return s
	}
	m := map[string]rootType{}
	var stepTypes map[string]*stepType
	for _, root := range (Scope{Body: body}).Roots() {
		switch root {
		case RootInputs:
			inputs := map[string]rootType{}
			for _, in := range l.pb.Inputs {
				inputs[in.Name] = rootTypeOf(in.Type)
			}
			m[root] = objectOf(inputs)
		case RootSteps:
			steps := map[string]rootType{}
			stepTypes = map[string]*stepType{}
			for _, s := range l.pb.AllSteps() {
				if s.Parent == nil || s.Parent == body {
					st := l.stepType(s)
					steps[s.Name], stepTypes[s.Name] = st.rt, st
				}
			}
			m[root] = objectOf(steps)
		case RootRun:
			m[root] = withFields(RunFields, nil)
		case RootItem:
			m[root] = rootTypeOf(body.ForEach.ItemType)
		case RootItemAttempt:
			m[root] = Field{Type: cty.Number, Whole: true}.rootType()
		case RootLocal, RootVars:
			// Per scope (rootTypes).
		}
	}
	s := &sectionTypes{roots: m, unknowns: map[string]cty.Value{}, natures: map[string]nature.Nature{}, steps: stepTypes}
	l.sections[body] = s
	return s
}

// localsType is local as step's own expressions see it (nil: any other
// expression): the playbook's locals and the step's own.
func (l *loader) localsType(step *Step) rootType {
	m := map[string]rootType{}
	for _, lv := range l.pb.Locals {
		m[lv.Name] = rootTypeOf(lv.Type)
	}
	if step != nil {
		for _, lv := range step.Locals {
			m[lv.Name] = rootTypeOf(lv.Type)
		}
	}
	return objectOf(m)
}

// varsType is vars: the declared vars with their types, any other name
// any. Conditions say so directly. HCL has no such type: once every step
// is decoded (l.vars), vars is an object of the declared vars and of
// every name a gate's set or an agent's vars gives, those as any; before
// that, or when some set's names cannot be told, it is any. Whether a
// name read is set at all is checked on its own (checkVarTraversals,
// checkConditionRefs).
func (l *loader) varsType() rootType {
	cond := types.Map{types.Extra: types.Any}
	attrs := map[string]cty.Type{}
	n := l.vars
	if n != nil && !n.open && !n.agentOpen {
		for _, name := range slices.Concat(n.set, n.agent) {
			attrs[name] = cty.DynamicPseudoType
		}
	}
	for _, v := range l.pb.Vars {
		t := rootTypeOf(v.Type)
		cond[v.Name], attrs[v.Name] = t.cond, t.hcl
	}
	t := cty.DynamicPseudoType
	if n != nil && !n.open && !n.agentOpen && len(l.pb.Vars) > 0 {
		t = cty.Object(attrs)
	}
	return rootType{t, cond}
}

// varsKnown records the names vars is given, once every step is decoded.
func (l *loader) varsKnown() *varNames {
	l.vars = l.collectVarNames()
	return l.vars
}

// pathType is the type of what path (a root, then attribute names)
// reads in sc, as far as it is known before the run; cty.NilType when sc
// has no such name.
func (l *loader) pathType(sc Scope, path []string) cty.Type {
	rt, ok := l.rootTypes(sc.normal())[path[0]]
	if !ok {
		return cty.NilType
	}
	t := rt.hcl
	for _, a := range path[1:] {
		if t == cty.DynamicPseudoType {
			return t
		}
		if !t.IsObjectType() || !t.HasAttribute(a) {
			return cty.NilType
		}
		t = t.AttributeType(a)
	}
	return t
}

// condEnv is the typed environment conditions in sc are compiled
// against.
func (l *loader) condEnv(sc Scope) *condEnv {
	sc = sc.normal()
	if e, ok := l.condEnvs[sc]; ok {
		return e
	}
	m := types.Map{}
	for name, t := range l.rootTypes(sc) {
		m[name] = t.cond
	}
	e := &condEnv{types: m, nature: envNature(m, l.section(sc.Body))}
	if sc.Step != nil && sc.Step.Template != "" {
		e.inst = sc.Step.Name
	}
	l.condEnvs[sc] = e
	return e
}

// unknowns are the roots of sc as unknown values of their types, which
// value expressions are type-checked and typed against.
func (l *loader) unknowns(sc Scope) map[string]cty.Value {
	sc = sc.normal()
	if sc.Input != nil {
		return map[string]cty.Value{RootValue: unknownOf(sc.Input.Type), RootInputs: l.section(nil).unknown(RootInputs)}
	}
	sec := l.section(sc.Body)
	vars := make(map[string]cty.Value, len(sec.roots)+2)
	for name := range sec.roots {
		vars[name] = sec.unknown(name)
	}
	vars[RootLocal] = unknownOf(l.localsType(sc.Step).hcl)
	vars[RootVars] = unknownOf(l.varsType().hcl)
	return vars
}

// envNature is m.Nature() for an environment m of a scope in section
// sec, its section's roots' natures taken from sec, made once per
// section rather than once per scope.
func envNature(m types.Map, sec *sectionTypes) nature.Nature {
	return mapNature(m, func(name string) (nature.Nature, bool) {
		if _, ok := sec.roots[name]; ok {
			return sec.nature(name), true
		}
		return nature.Nature{}, false
	})
}

// mapNature is m.Nature(), made as types.Map's Nature makes it but for
// the natures of m's fields, which known gives when it has them.
func mapNature(m types.Map, known func(name string) (nature.Nature, bool)) nature.Nature {
	nt := nature.NatureOf(map[string]any{})
	if nt.TypeData == nil {
		nt.TypeData = new(nature.TypeData)
	}
	nt.Fields = make(map[string]nature.Nature, len(m))
	nt.Strict = true
	for k, v := range m {
		if k == types.Extra {
			nt.Strict = false
			d := v.Nature()
			nt.DefaultMapValue = &d
			continue
		}
		if n, ok := known(k); ok {
			nt.Fields[k] = n
			continue
		}
		nt.Fields[k] = v.Nature()
	}
	return nt
}

// inferContext is what the locals of body's section (nil: the
// playbook's) are typed against: the section's unknowns. inferType sets
// local to the locals typed so far. Its functions are the run's, with a
// clock and UUIDs that give nothing.
func (l *loader) inferContext(body *Step) *hcl.EvalContext {
	return &hcl.EvalContext{
		Variables: l.unknowns(Scope{Body: body}),
		Functions: RunFunctions(Impure{Now: func() time.Time { return time.Time{} }, UUID: func() string { return "" }}),
	}
}

// unknownOf is an unknown value of type t; DynamicVal when t is not known.
// Optional attributes only shape conversions; values have them all.
func unknownOf(t cty.Type) cty.Value {
	if t == cty.NilType || t == cty.DynamicPseudoType {
		return cty.DynamicVal
	}
	return cty.UnknownVal(t.WithoutOptionalAttributesDeep())
}

// outputType is the type of steps.NAME.output as a run makes it: the
// declared returns, else what the action gives: an agent's or an ask's
// answer as text, a command's stdout as text or lines, a builtin's
// result. cty.DynamicPseudoType when it cannot be known (JSON without
// returns, a sub-playbook's output). Every step's action is decoded
// before anything is typed against it (decodeStepAction).
func (l *loader) outputType(s *Step) cty.Type {
	if s.Returns != cty.NilType {
		return s.Returns
	}
	switch a := s.Action.(type) {
	case *AgentCall, *Ask:
		return cty.String
	case *Shell:
		switch a.Parse {
		case ParseText, "":
			return cty.String
		case ParseLines:
			return cty.List(cty.String)
		}
	case *Call:
		if l.sigs != nil {
			return l.sigs.Result(a.Builtin)
		}
	}
	return cty.DynamicPseudoType
}
