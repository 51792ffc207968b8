# The branches of stdlib:orchestrator that no test can take, and why (apl
# test --cover lists them apart).

unreachable "step.assess.gate.rule.remediate.on_exhausted" {
  reason = "remediate's condition stops at max_remediation_cycles, the count its cap allows, so the cap never runs out"
}
