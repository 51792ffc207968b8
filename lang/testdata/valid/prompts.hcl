# Prompt templates: heredocs with directives, vars, and a template read
# from a file next to the playbook.
playbook "prompts" {
  description = "Prompt templates."
}

input "phase_id" {
  type = string
}

input "issues" {
  type    = list(string)
  default = []
}

agent "planner" {
  type = "gsd-planner"
}

prompt "plan" {
  template = <<-EOT
    Plan phase ${inputs.phase_id}.
    %{~ if length(inputs.issues) > 0 }
    Fix these first:
    %{~ for issue in inputs.issues }
    - ${issue}
    %{~ endfor }
    %{~ endif }
    Previous score: ${vars.previous_score}
    Answer with the tasks, as {"tasks": ["..."]}.
  EOT
}

prompt "review" {
  template = file("prompts/review.md")
}

step "plan" {
  returns = object({ tasks = list(string) })
  agent "planner" {
    prompt = prompt.plan
    vars = {
      previous_score = 0
    }
  }
}

step "review" {
  agent "planner" {
    prompt = prompt.review
    vars   = { tasks = steps.plan.output.tasks }
  }
}
