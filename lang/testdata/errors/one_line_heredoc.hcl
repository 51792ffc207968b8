playbook "one_line_heredoc" { description = "A heredoc condition after one-line blocks." }

step "a" { shell { command = ["/bin/true"] } }

step "b" { shell { command = ["/bin/true"] } }

step "c" {
  when = <<-EXPR
    steps.a.exit_code == 0
    && steps.b.status == 1 // ERROR: Invalid condition
  EXPR
  shell { command = ["/bin/true"] }
}
