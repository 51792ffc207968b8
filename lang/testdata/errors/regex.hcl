playbook "regex" {
  description = "Constant regular expressions that do not compile, and a capture that is not there."
}

step "version" {
  shell {
    command = ["git", "describe"]
  }
  gate {
    rule "tagged" {
      when = "steps.version.output matches 'v([0-9]+'" # ERROR: Invalid condition
      log  = "major ${regex("v([0-9]+", steps.version.output)[0]}" # ERROR: Invalid function argument
    }
    rule "minor" {
      when = "steps.version.output startsWith 'v'"
      log  = "minor ${regex("v([0-9]+)\\.([0-9]+)", steps.version.output)[2]}" # ERROR: Invalid index
    }
    otherwise {
      log = "untagged"
    }
  }
}
