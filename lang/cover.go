package lang

import (
	"slices"

	"github.com/hashicorp/hcl/v2"
)

// A Branch is a place in a playbook that a test suite can exercise or
// miss: a gate rule or otherwise taken, an on_exhausted outcome, an
// on_failure or finally step run, a for_each item completed or failed.
// apl test --cover counts the branches a suite's runs went through.
type Branch struct {
	// ID names the branch by its block's address
	// (step.verify.gate.rule.pass, step.verify.gate.rule.retry.on_exhausted,
	// step.rollback, step.tasks.item.failed).
	ID string
	// Kind is what the branch is: "rule", "otherwise", "on_exhausted",
	// "on_failure", "finally", "item completed", "item failed".
	Kind string
	Step string
	// Range is where it is written.
	Range hcl.Range
}

// The branch IDs, built in one place for the playbook's list and for a
// run's events.

// RuleBranch is the ID of a gate rule (or "otherwise") of a step.
func RuleBranch(step, rule string) string {
	gate := BlockAddress(StepBranch(step), "gate")
	if rule == "otherwise" {
		return BlockAddress(gate, "otherwise")
	}
	return BlockAddress(gate, "rule", rule)
}

// ExhaustedBranch is the ID of a rule's on_exhausted outcome.
func ExhaustedBranch(step, rule string) string {
	return BlockAddress(RuleBranch(step, rule), "on_exhausted")
}

// StepBranch is the ID of an on_failure or finally step.
func StepBranch(step string) string { return BlockAddress("", "step", step) }

// ItemBranch is the ID of a for_each step's items ending completed or
// failed.
func ItemBranch(step, status string) string {
	return StepBranch(step) + ".item." + status
}

// Branches lists the playbook's branches in the order they are written.
func (p *Playbook) Branches() []Branch {
	var out []Branch
	for _, s := range p.AllSteps() {
		if g := s.Gate; g != nil {
			for _, r := range g.Tried() {
				if r == g.Otherwise && g.Implicit {
					// A step's own actions: there is no other way.
					continue
				}
				kind := "rule"
				if r == g.Otherwise {
					kind = "otherwise"
				}
				out = append(out, Branch{ID: RuleBranch(s.Name, r.Name), Kind: kind, Step: s.Name, Range: r.DeclRange})
				if o := r.Outcome; o != nil && o.Exhausted != nil {
					out = append(out, Branch{ID: ExhaustedBranch(s.Name, r.Name), Kind: "on_exhausted", Step: s.Name, Range: o.Exhausted.DeclRange})
				}
			}
		}
		if s.ForEach != nil {
			out = append(out, Branch{ID: ItemBranch(s.Name, "completed"), Kind: "item completed", Step: s.Name, Range: s.DeclRange})
			if s.ForEach.canFail() {
				out = append(out, Branch{ID: ItemBranch(s.Name, "failed"), Kind: "item failed", Step: s.Name, Range: s.DeclRange})
			}
		}
	}
	for _, sec := range []struct {
		kind  string
		steps []*Step
	}{{"on_failure", p.OnFailure}, {"finally", p.Finally}} {
		for _, s := range sec.steps {
			out = append(out, Branch{ID: StepBranch(s.Name), Kind: sec.kind, Step: s.Name, Range: s.DeclRange})
		}
	}
	slices.SortStableFunc(out, func(a, b Branch) int {
		if a.Range.Filename != b.Range.Filename {
			if a.Range.Filename < b.Range.Filename {
				return -1
			}
			return 1
		}
		return a.Range.Start.Byte - b.Range.Start.Byte
	})
	return out
}

// canFail reports whether an item of the for_each can fail: one of its
// steps takes an action (which may fail) or has an outcome that fails.
// Steps that only decide and record fail only on a broken expression,
// which is not a branch a test should take.
func (fe *ForEach) canFail() bool {
	for _, s := range fe.Steps {
		if s.Action != nil {
			return true
		}
		for _, x := range s.Successors() {
			if x.End == EndFail {
				return true
			}
		}
	}
	return false
}
