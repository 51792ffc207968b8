playbook "step_locals" {
  description = "A step's locals are checked like the playbook's, and only the step itself sees them."
}

locals {
  total = length(steps.plan.output)
}

step "plan" {
  returns = list(object({ id = string, spec = string }))
  shell {
    command = ["cat", "tasks.json"]
    parse   = "json"
  }
}

step "execute" {
  for_each = "steps.plan.output"
  key      = "item.id"
  locals { # ERROR: locals on a for_each step
    n = 1
  }
  step "task" {
    locals {
      parts    = split(":", item.spec)
      criteria = { kind = local.parts[0], cmd = join(":", slice(local.parts, 1, length(local.parts))) }
      total    = 2 # ERROR: Duplicate local
    }
    when           = "local.criteria.kind != ''" # ERROR: Reference to another step's local
    progress_start = "${local.criteria.knd}"    # ERROR: Unknown local field
    shell {
      command = ["bash", "-c", local.criteria.cmd, local.critera] # ERROR: Reference to undeclared local
    }
    check "ran" {
      condition = "local.criteria.cdm != ''" # ERROR: Invalid condition
    }
  }
  step "after" {
    shell {
      command = ["echo", local.criteria.kind] # ERROR: Reference to another step's local
    }
  }
}
