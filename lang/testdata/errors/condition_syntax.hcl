playbook "condition_syntax" {
  description = "Conditions expr cannot parse."
}

input "threshold" {
  type = number
}

step "s" {
  when = "inputs.threshold >" # ERROR: Invalid condition
  shell {
    command = ["/bin/true"]
  }
}

step "t" {
  when = "" # ERROR: Empty condition
  shell {
    command = ["/bin/true"]
  }
}

step "u" {
  when = <<-EXPR
    inputs.threshold > 1
    && inputs.threshold < 'ten' // ERROR: Invalid condition
  EXPR
  shell {
    command = ["/bin/true"]
  }
}

# Conditions that fail to compile do not count as reading an input.
step "use" {
  shell {
    command = ["echo", tostring(inputs.threshold)]
  }
}
