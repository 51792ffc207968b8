step "plan" {
  returns = object({ tasks = list(object({ id = string })) })
  agent "planner" {
    prompt = file("prompts/plan.md")
  }
  when = "steps.triage.output.kind == \"bug\" && len(steps.triage.output.tasks) > 0"
  description = "Runs when steps.triage found bugs."
  # a comment
  template = <<-EOT
    Fix ${steps.triage.output.kind} now.
  EOT
}
