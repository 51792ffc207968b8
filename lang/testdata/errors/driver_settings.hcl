playbook "driver_settings" {
  description = "Driver settings a run would reject, each caught at load."
}

driver "remote" {
  type        = "openai"
  max_tokens  = "lots"    # ERROR: Invalid driver setting
  timeout     = "forever" # ERROR: Invalid driver setting
  retries     = -1        # ERROR: Invalid driver setting
  max_tokns   = 10        # ERROR: Unsupported argument
  command     = ["x"]     # ERROR: Unsupported argument
  prices      = { gpt = { input = 1, ouput = 2 } } # ERROR: Invalid driver setting
}

driver "local" {
  type      = "command"
  command   = "./agent.sh" # ERROR: Invalid driver setting
  input     = "pipe"       # ERROR: Invalid driver setting
  fields    = { txt = "a" } # ERROR: Invalid driver setting
  base_url  = "http://localhost" # ERROR: Unsupported argument
  timeout   = "90s"
}

driver "claude" {
  type    = "claude-code"
  options = "fast" # ERROR: Invalid driver setting
}

driver "bare" { # ERROR: Invalid driver
  type = "command"
}

driver "mapped" { # ERROR: Invalid driver
  type    = "command"
  command = ["./agent.sh"]
  fields  = { text = "result" }
}

driver "preset" { # ERROR: Invalid driver
  type    = "codex"
  options = { sandbox = "read-only", max_turns = 3 }
}
