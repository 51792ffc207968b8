# A gate with ordered rules, a capped loop back, its on_exhausted, and an
# otherwise; next for an explicit edge.
playbook "gates" {
  description = "Plan and check, at most three times."
}

input "min_confidence" {
  type    = number
  default = 7
}

step "plan" {
  progress = "PLAN"
  shell {
    command = ["make", "plan"]
  }
}

step "check" {
  progress = "CHECK"
  returns = object({
    pass       = bool
    confidence = number
    issues     = list(string)
  })
  shell {
    command = ["make", "check"]
    parse   = "json"
  }
  gate {
    rule "pass" {
      when = "steps.check.output.pass && steps.check.output.confidence >= inputs.min_confidence"
      log  = "Check passed at ${steps.check.output.confidence}."
    }
    rule "hopeless" {
      when   = <<-EXPR
        len(steps.check.output.issues) > 10
        && steps.check.output.confidence < 2
      EXPR
      fail   = "halt"
      reason = "too many issues"
    }
    otherwise {
      log  = "Check failed: ${join("; ", steps.check.output.issues)}"
      goto = "plan"
      max  = 3
      on_exhausted {
        set    = { recommendation = "halt" }
        fail   = "halt"
        reason = "check failed 3 times"
      }
    }
  }
}

step "execute" {
  progress = "EXECUTE"
  returns  = object({ done = bool })
  shell {
    command = ["make", "execute"]
    parse   = "json"
  }
  gate {
    rule "done" {
      when   = "steps.execute.output.done"
      finish = "completed"
    }
    otherwise {
      goto = "retry"
      max  = 2
      on_exhausted {
        finish = "blocked"
        reason = "execute did not finish"
      }
    }
  }
}

step "retry" {
  next = "execute"
  shell {
    command = ["make", "clean"]
  }
}
