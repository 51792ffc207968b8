playbook "named_types" {
  description = "Named types are declared once, resolve without cycles, and their examples fit them."
}

type "verdict" { # WARNING: Unused type
  type    = object({ pass = bool, failures = list(type.failure) })
  example = { pass = "maybe", failures = [] } # ERROR: Example does not match its type
}

type "failure" {
  type = object({ criterion = string, evidence = optional(string) })
}

type "verdict" { # ERROR: Duplicate type
  type = string
}

type "tree" {
  type = object({ name = string, children = list(type.tree) }) # ERROR: Type contains itself
}

type "broken" {
  type = object({ score = numbr }) # ERROR: Invalid type specification
}

type "spare" { # WARNING: Unused type
  type = string
}

step "verify" {
  returns = type.verdikt # ERROR: Unknown type
  shell {
    command = ["verify"]
    parse   = "json"
  }
}

step "rate" {
  # A reference to a type with problems reads as any: no second error.
  returns = object({ tree = type.tree, broken = type.broken })
  shell {
    command = ["rate"]
    parse   = "json"
  }
}

step "bad_ref" {
  returns = type.failure.criterion # ERROR: Invalid type reference
  shell {
    command = ["x"]
    parse   = "json"
  }
}
