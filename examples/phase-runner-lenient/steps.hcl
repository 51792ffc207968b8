# The plan check passes at confidence 5 and allows 3 re-plans.
step "plan_check" {
  gate {
    rule "pass" {
      when = "steps.plan_check.output.pass && steps.plan_check.output.confidence >= 5"
    }
    otherwise {
      max = 3
      on_exhausted {
        reason = "plan check failed after 4 iterations"
      }
    }
  }
}

# Verification answers may run longer.
budget "verify" {
  max_response_lines = 400
}
