package lang

import (
	"fmt"
	"maps"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// checkExitCodes checks, when the playbook declares exit_codes, that the
// constant finish and fail values of the run's gates each have a code: a
// finish status without one exits 1 as a failure does, which a misspelt
// status makes silently (an error). A fail value without its own code
// exits 1 as failures do (a warning), and is fine once "failed" is
// mapped. An item's finish and fail (inside a for_each body)
// and the on_failure and finally steps' do not end the run, so they are
// not checked.
func (l *loader) checkExitCodes() hcl.Diagnostics {
	codes := l.pb.ExitCodes
	if len(codes) == 0 {
		return nil
	}
	keys := slices.Sorted(maps.Keys(codes))
	var diags hcl.Diagnostics
	check := func(e hcl.Expression, what string) {
		if e == nil || len(e.Variables()) > 0 {
			return
		}
		v, d := e.Value(nil)
		if d.HasErrors() || v.IsNull() || !v.IsKnown() || v.Type() != cty.String {
			return
		}
		name := v.AsString()
		if _, ok := codes[name]; ok || name == "completed" || name == "failed" {
			return
		}
		if what == "finish" && ReservedStatus(name, false) {
			return // reported as a reserved status
		}
		if _, ok := codes["failed"]; ok && what == "fail" {
			return
		}
		if what == "fail" {
			// A failure exiting 1 is a sensible default: a warning.
			diags = append(diags, warnDiag("Fail value without an exit code",
				fmt.Sprintf("The playbook declares exit_codes, but none for fail = %q or for \"failed\", so a run that fails this way exits with 1. Add %s = N to exit_codes to give it its own code.%s",
					name, name, didYouMean(name, keys)), e.Range()))
			return
		}
		diags = append(diags, errDiag("Status not in exit_codes",
			fmt.Sprintf("The playbook declares exit_codes, but none for %s = %q, so apl run would exit with 1 when the run ends this way; exit_codes maps %s.%s Add %s = N to exit_codes if %q is meant.",
				what, name, quoteList(keys), didYouMean(name, keys), name, name), e.Range()))
	}
	for _, s := range l.pb.Steps {
		for _, x := range s.Successors() {
			switch x.End {
			case EndFinish:
				check(x.Outcome.Finish, "finish")
			case EndFail:
				check(x.Outcome.Fail, "fail")
			}
		}
	}
	return diags
}
