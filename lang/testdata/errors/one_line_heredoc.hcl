# BUG: a heredoc condition's error in a file with one-line blocks points at the line the rewritten file has (past the end here), not the line as written
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
