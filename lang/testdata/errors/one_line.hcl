playbook "one_line" { description = "Diagnostics after one-line blocks point at the lines as written." }

step "a" { shell { command = ["/bin/true"] } }

step "b" { shell { script = "echo ${inputs.nmae}" } } # ERROR: Reference to undeclared input

step "c" { shell { command = ["/bin/true"] } }

step "d" {
  when = "steps.c.exit_code == 'zero'" # ERROR: Invalid condition
  shell { parse = "yaml" } # ERROR: Missing shell command # ERROR: Invalid parse
}

step "f" { next = "a" } # ERROR: Unbounded cycle
