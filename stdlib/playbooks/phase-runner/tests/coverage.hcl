# The branches of stdlib:phase-runner that no test can take, and why (apl
# test --cover lists them apart). Each rule's condition stops at the same
# count as its cap; max is there so that apl graph and apl plan see a
# bounded loop.

unreachable "step.gate.gate.rule.debug.on_exhausted" {
  reason = "debug's condition stops at max_debug_attempts, the count its cap allows"
}

unreachable "step.gate.gate.rule.replan.on_exhausted" {
  reason = "replan's condition stops at max_replan_attempts, the count its cap allows"
}
