playbook "condition_type" {
  description = "Conditions that compile but are ill-typed."
}

input "threshold" {
  type = number
}

input "name" {
  type = string
}

step "s" {
  when = "inputs.threshold == 'seven'" # ERROR: Invalid condition
  shell {
    command = ["/bin/true"]
  }
}

step "t" {
  when = "inputs.name" # ERROR: Invalid condition
  shell {
    command = ["/bin/true"]
  }
}

step "u" {
  when = "inputs.nmae != ''" # ERROR: Invalid condition
  shell {
    command = ["/bin/true"]
  }
}

# Conditions that fail to compile do not count as reading an input.
step "use" {
  shell {
    command = ["echo", tostring(inputs.threshold), inputs.name]
  }
}
