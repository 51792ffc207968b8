playbook "prompt_optional" {
  description = "A prompt's optional list names values its template reads."
}

input "phase_id" {
  type = string
}

input "feedback" {
  type    = string
  default = ""
}

agent "planner" {
  type = "gsd-planner"
}

prompt "plan" {
  template = "Plan phase ${inputs.phase_id}. Feedback: ${inputs.feedback}"
  optional = [
    inputs.feedback,
    inputs.phase_goal, # ERROR: Reference to undeclared input # WARNING: Optional name not in the prompt
    "inputs.phase_id", # ERROR: Invalid optional
    inputs.phase_id.name, # ERROR: Unsupported attribute
  ]
}

prompt "check" {
  template = "Check phase ${inputs.phase_id}."
  optional = inputs.feedback # ERROR: Invalid optional
}

step "plan" {
  agent "planner" {
    prompt   = prompt.plan
    optional = [steps.check.output] # WARNING: Optional name not in the prompt
  }
}

step "check" {
  agent "planner" {
    prompt = prompt.check
  }
}
