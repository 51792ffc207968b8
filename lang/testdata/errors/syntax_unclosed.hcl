playbook "syntax_unclosed" {
  description = "A block that never ends."
}

step "s" { # ERROR: Unclosed configuration block
  shell {
    command = ["/bin/true"]
  }
