# A required string input interpolated into a bash script.
playbook "shell_script" {
  description = "Greet someone."
  version     = "1.0.0"
  label       = "Greeting ${inputs.name}"
}

input "name" {
  type = string
}

step "s" {
  shell {
    script = "echo ${inputs.name}"
  }
}

step "listing" {
  description = "Every shell attribute at once."
  timeout     = "90s"
  shell {
    command = ["ls", "-1", inputs.name]
    parse   = "lines"
    dir     = "."
    env     = { GREETING = "hello ${inputs.name}" }
    stdin   = "${inputs.name}\n"
  }
}

step "status" {
  continue_on_error = true
  shell {
    script = "printf '{\"count\": %d}' ${length(steps.listing.output)}"
    parse  = "json"
  }
}
