# The branches of stdlib:conductor that no test can take, and why (apl
# test --cover lists them apart). requeue needs a cap; these caps are
# looser than the rule that stops a task first.

unreachable "step.guidance.gate.otherwise.on_exhausted" {
  reason = "every guidance requeues the task, one more attempt each, and escalate refuses guidance at max_total_attempts (at most 10): guidance is taken at most 9 times, its cap"
}

unreachable "step.retry.gate.rule.fresh.on_exhausted" {
  reason = "fresh is taken only at item_attempt 2, once a task, against a cap of 9"
}

unreachable "step.retry.gate.otherwise.on_exhausted" {
  reason = "otherwise is taken only at item_attempt 1, once a task, against a cap of 9"
}
