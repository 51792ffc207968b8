playbook "invalid_default" {
  description = "Defaults that do not fit their input's type."
}

input "threshold" {
  type    = number
  default = "high" # ERROR: Invalid default value
}

input "checks" {
  type    = list(string)
  default = { lint = true } # ERROR: Invalid default value
}

input "strict" {
  type    = bool
  default = inputs.threshold # ERROR: Constant required
}

input "kind" {
  type = strin # ERROR: Invalid type specification
}

step "s" {
  shell {
    command = concat([inputs.kind, tostring(inputs.threshold), tostring(inputs.strict)], inputs.checks)
  }
}
