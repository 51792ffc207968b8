# The smallest playbook: a name and a description, no steps.
playbook "empty" {
  description = "A playbook that declares itself and nothing else."
}
