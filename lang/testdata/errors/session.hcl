playbook "session" {
  description = "An agent's session must give a session id, a string."
}

input "count" {
  type    = number
  default = 1
}

agent "a" {
  driver = "claude-code"
}

step "discovery" {
  returns = object({ files = list(string), thread = string })
  agent "a" {
    prompt = "Find the files."
  }
}

step "follow" {
  agent "a" {
    prompt  = "Go on."
    session = steps.discovery.attempts # ERROR: Invalid session
  }
}

step "files" {
  agent "a" {
    prompt  = "Go on."
    session = steps.discovery.output.files # ERROR: Invalid session
  }
}

step "count" {
  agent "a" {
    prompt  = "Go on."
    session = inputs.count # ERROR: Invalid session
  }
}

step "typo" {
  agent "a" {
    prompt  = "Go on."
    session = steps.discovery.sesion_id # ERROR: Unknown step attribute
  }
}

step "fine" {
  agent "a" {
    prompt  = "Go on."
    session = steps.discovery.output.thread
  }
}
