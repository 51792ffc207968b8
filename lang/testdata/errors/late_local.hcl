playbook "late_local" {
  description = "A step's local that reads the step's own output exists only after its action."
}

agent "fixer" {}

step "status" {
  locals {
    dirty = [for f in steps.status.output : f if f != "state.json"]
    count = length(local.dirty)
  }
  shell {
    command = ["echo", "${local.count}"] # ERROR: Local read before the step's output
    parse   = "lines"
  }
  gate {
    rule "dirty" {
      when = "local.count > 0"
      fail = "dirty"
    }
    otherwise {}
  }
}

step "fix" {
  locals {
    answer = steps.fix.output
  }
  agent "fixer" {
    prompt = "Fix ${local.answer}." # ERROR: Local read before the step's output
  }
}
