# A lenient phase runner: stdlib:phase-runner with a lower bar, holding only
# what it changes (apl diff stdlib:phase-runner examples/phase-runner-lenient).
extends = "stdlib:phase-runner"

playbook "phase_runner_lenient" {
  description = "stdlib:phase-runner, passing at 7/10 and re-planning more."
}

input "pass_threshold" {
  default = 7
}

# With 7 as the default, the quality mode makes no sense here.
mode "quality" {
  removed = true
}

# The plan check passes at confidence 5 and allows 3 re-plans.
step "plan_check" {
  gate {
    rule "pass" {
      when = "steps.plan_check.output.pass && steps.plan_check.output.confidence >= 5"
    }
    otherwise {
      max = 3
      on_exhausted { reason = "plan check failed after 4 iterations" }
    }
  }
}
