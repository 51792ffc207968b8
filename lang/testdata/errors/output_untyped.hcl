playbook "output_untyped" {
  description = "Fields read from outputs that declare no returns."
}

step "plan" {
  agent "planner" {
    prompt = "Plan."
  }
}

step "count" {
  shell {
    command = ["wc", "-l"]
  }
}

step "scan" {
  shell {
    command = ["scan", "--json"]
    parse   = "json"
  }
}

step "report" {
  when = "steps.plan.output.ready" # ERROR: Output has no fields
  shell {
    script = "echo ${steps.plan.output.tasks} ${steps.count.output.lines} ${steps.scan.output.findings}" # ERROR: Output has no fields # ERROR: Output has no fields # WARNING: Output field not declared
  }
}

agent "planner" {
  type = "claude-code"
}
