# The one-line forms: a block holding one attribute or one nested block
# may sit on one line.
playbook "one_line" { description = "Everything on one line that can be." }

input "name" { type = string }

step "greet" { shell { script = "echo ${inputs.name}" } }

step "check" { shell { command = ["/bin/true"] } }

step "done" {
  when = "steps.check.exit_code == 0"
  shell { command = ["echo", "done"] }
}
