package lang

import (
	"fmt"
	"maps"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// checkExitCodes checks, when the playbook declares exit_codes, that every
// constant status a gate finishes the run with is one of its keys: any
// other exits 1, which a misspelt status makes silently.
//
// TODO(exit_codes): check constant fail values too once exit_codes maps a
// failed run's recommendation; today a failed run's status is "failed".
func (l *loader) checkExitCodes() hcl.Diagnostics {
	codes := l.pb.ExitCodes
	if codes == nil {
		return nil
	}
	keys := slices.Sorted(maps.Keys(codes))
	var diags hcl.Diagnostics
	var outcome func(o *Outcome)
	outcome = func(o *Outcome) {
		if o == nil {
			return
		}
		outcome(o.Exhausted)
		if o.Finish == nil || len(o.Finish.Variables()) > 0 {
			return
		}
		v, d := o.Finish.Value(nil)
		if d.HasErrors() || v.IsNull() || v.Type() != cty.String {
			return
		}
		status := v.AsString()
		if _, ok := codes[status]; ok || status == "completed" || ReservedStatus(status, false) {
			return
		}
		diags = append(diags, errDiag("Status not in exit_codes",
			fmt.Sprintf("The run finishes as %q, which exit_codes does not map, so apl run would exit with 1; exit_codes maps %s.%s Add %q to exit_codes if the status is meant.",
				status, quotedList(keys), didYouMean(status, keys), status), o.Finish.Range()))
	}
	for _, s := range l.pb.AllSteps() {
		if s.Parent != nil || s.Gate == nil {
			continue // an item's status is not the run's
		}
		for _, r := range s.Gate.Rules {
			outcome(r.Outcome)
		}
		if s.Gate.Otherwise != nil {
			outcome(s.Gate.Otherwise.Outcome)
		}
	}
	return diags
}
