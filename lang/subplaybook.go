package lang

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

var subPlaybookSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "source", Required: true},
		{Name: "inputs"},
		{Name: "mode"},
	},
}

// SubPlaybook runs another playbook as a step; its output object is the
// step's output.
type SubPlaybook struct {
	Source string
	// Ref is the playbook Source names as it was loaded: stdlib:NAME, or
	// Source resolved against the directory of the file that names it.
	Ref       string
	Playbook  *Playbook // loaded with the parent
	Inputs    hcl.Expression
	Mode      string
	DeclRange hcl.Range

	// read is what loading the playbook read, Playbook or, when it does
	// not load, as much of it as was read: loading the parent again reads
	// its files all the same (Files).
	read *Playbook
}

func (*SubPlaybook) action()            {}
func (a *SubPlaybook) Range() hcl.Range { return a.DeclRange }
func (a *SubPlaybook) String() string   { return "playbook " + a.Source }

// decodeSubPlaybookBlock reads a step that runs another playbook. The
// other playbook is loaded and checked now, with this one.
func (l *loader) decodeSubPlaybookBlock(s *Step, b *hcl.Block) (Action, hcl.Diagnostics) {
	content, diags := b.Body.Content(subPlaybookSchema)
	a := &SubPlaybook{DeclRange: b.DefRange}
	if at := content.Attributes["mode"]; at != nil {
		v, d := constString(at)
		diags = append(diags, d...)
		a.Mode = v
	}
	if at := content.Attributes["inputs"]; at != nil {
		a.Inputs = at.Expr
		l.deferRefs(at.Expr, refScope{body: s.Parent, step: s, action: true, what: "sub-playbook inputs"})
	}
	at := content.Attributes["source"]
	if at == nil {
		return a, diags
	}
	src, d := constString(at)
	diags = append(diags, d...)
	if d.HasErrors() {
		return a, diags
	}
	ref := src
	if !strings.HasPrefix(src, StdlibPrefix) && !filepath.IsAbs(src) {
		if dir := l.dirOf(at.Expr.Range().Filename); strings.HasPrefix(dir, StdlibPrefix) {
			ref = dir + "/" + filepath.ToSlash(src)
		} else {
			ref = filepath.Join(dir, src)
		}
	}
	a.Source, a.Ref = src, ref
	if d := l.confineSub(src, ref, at.Expr.Range()); d != nil {
		return a, append(diags, d)
	}
	canon := canonicalRef(ref)
	for _, r := range l.stack {
		if r == canon {
			return a, append(diags, errDiag("Playbook calls itself",
				fmt.Sprintf("Playbook %q is already being loaded higher up (%s); a playbook cannot run itself.", src, strings.Join(append(l.stack, canon), " → ")), at.Expr.Range()))
		}
	}
	pb, subDiags := l.loadSub(ref)
	a.read = pb
	if subDiags.HasErrors() {
		detail := fmt.Sprintf("Playbook %q does not load: %s.", src, firstError(subDiags))
		return a, append(diags, errDiag("Invalid sub-playbook", detail, at.Expr.Range()))
	}
	a.Playbook = pb
	if a.Mode != "" && pb.Modes[a.Mode] == nil {
		diags = append(diags, errDiag("Unknown mode", fmt.Sprintf("Playbook %q has no mode %q.%s", src, a.Mode, didYouMean(a.Mode, slices.Sorted(maps.Keys(pb.Modes)))), content.Attributes["mode"].Expr.Range()))
	}
	diags = append(diags, checkSubInputs(pb, a.Inputs, src, b.DefRange)...)
	return a, diags
}

// confineSub refuses a sub-playbook source, written src and resolved to
// ref, that leads outside the project, before anything there is read.
func (l *loader) confineSub(src, ref string, rng hcl.Range) *hcl.Diagnostic {
	if strings.HasPrefix(ref, StdlibPrefix) {
		return nil
	}
	if err := checkPlaybookPath(src); err != nil {
		return pathDiag("Invalid sub-playbook", err, rng)
	}
	if _, _, ok := l.ld.readFiles(ref); ok {
		return nil // as the run that started elsewhere read it
	}
	var pe *PathError
	if _, err := l.project().Resolve(ref); errors.As(err, &pe) {
		return pathDiag("Invalid sub-playbook", asWritten(err, ref, src), rng)
	}
	return nil // a missing file: loading it says so
}

// loadSub loads the sub-playbook ref, or returns it as loaded earlier in
// this load. A cached result is the same whoever asks: a cycle through ref
// is found whichever way ref is reached, since every step of the cycle
// leads back to ref.
func (l *loader) loadSub(ref string) (*Playbook, hcl.Diagnostics) {
	canon := canonicalRef(ref)
	key := l.project().key(canon)
	if l.subs == nil {
		// LoadSources called directly: a cache for this load and below.
		l.subs = &subCache{loaded: map[string]subLoad{}}
	}
	if r, ok := l.subs.get(key, l.ld.task); ok {
		return r.pb, r.diags
	}
	// A sub-playbook is checked as fully as the playbook that runs it (its
	// answers and scripts too), so that a cached load of either stands
	// for the other.
	sub := *l.ld
	sub.Cache = nil
	sub.stack = append(append([]string(nil), l.stack...), canon)
	sub.subs = l.subs
	sub.project = l.project() // a sub-playbook reads in its parent's project
	pb, diags := sub.Load(ref)
	l.subs.put(key, l.ld.task, subLoad{pb, diags})
	return pb, diags
}

// checkSubInputs checks, when the inputs are written as an object, that
// they name inputs the sub-playbook declares and cover its required ones.
func checkSubInputs(pb *Playbook, expr hcl.Expression, src string, rng hcl.Range) hcl.Diagnostics {
	given := map[string]bool{}
	var diags hcl.Diagnostics
	if expr != nil {
		items, d := hcl.ExprMap(expr)
		if d.HasErrors() {
			return nil // computed: checked when the step runs
		}
		for _, it := range items {
			key := hcl.ExprAsKeyword(it.Key)
			if key == "" {
				return nil
			}
			given[key] = true
			if pb.Input(key) == nil {
				names := make([]string, len(pb.Inputs))
				for i, in := range pb.Inputs {
					names[i] = in.Name
				}
				diags = append(diags, errDiag("Unknown sub-playbook input",
					fmt.Sprintf("Playbook %q has no input %q.%s", src, key, didYouMean(key, names)), it.Key.Range()))
			}
		}
	}
	for _, in := range pb.Inputs {
		if in.Required() && !given[in.Name] {
			diags = append(diags, errDiag("Missing sub-playbook input",
				fmt.Sprintf("Playbook %q requires input %q; set it in inputs.", src, in.Name), rng))
		}
	}
	return diags
}

// firstError describes the first error of a sub-playbook's load, detail
// included, so that the reason (a cycle, a missing file) shows here.
func firstError(diags hcl.Diagnostics) string {
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			msg := d.Summary
			if d.Detail != "" {
				msg += ": " + strings.TrimSuffix(d.Detail, ".")
			}
			if d.Subject != nil {
				msg = d.Subject.String() + ": " + msg
			}
			return msg
		}
	}
	return "unknown error"
}
