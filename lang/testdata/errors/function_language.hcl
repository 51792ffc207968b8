playbook "function_language" {
  description = "Each language's functions: the value functions work in conditions, expr-lang's builtins do not in values."
}

input "files" {
  type    = list(string)
  default = ["a.go"]
}

step "list" {
  when = "length(inputs.files) > 0 && contains(inputs.files, 'a.go')"
  shell {
    command = ["echo", "${len(inputs.files)}"] # ERROR: Call to unknown function
  }
}

step "split" {
  when = "len(split(inputs.files[0], '.')) == 2" # ERROR: Invalid condition
  shell {
    command = ["echo", "${filter(inputs.files)}"] # ERROR: Call to unknown function
  }
}

step "clock" {
  when = "timestamp() > ''" # ERROR: Invalid condition
  shell {
    command = ["true"]
  }
}
