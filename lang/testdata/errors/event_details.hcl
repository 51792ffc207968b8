playbook "event_details" {
  description = "Gate event details that are not objects, have no event, or read what does not exist."
}

step "commit" {
  returns = object({ sha = string })
  shell {
    command = ["echo", "{\"sha\": \"abc\"}"]
    parse   = "json"
  }
  gate {
    rule "listed" {
      when    = "steps.commit.output.sha == 'x'"
      event   = "task_completed"
      details = ["abc"] # ERROR: Invalid details
      fail    = "halt"
    }
    rule "unnamed" {
      when    = "steps.commit.output.sha == 'y'"
      details = { commit = steps.commit.output.sha } # ERROR: details without event
      fail    = "halt"
    }
    rule "typo" {
      when    = "steps.commit.output.sha == 'z'"
      event   = "task_completed"
      details = { commit = steps.commit.output.shaa } # ERROR: Unknown output field
      fail    = "halt"
    }
    otherwise {
      event   = "task_completed"
      details = { commit = steps.commit.output.sha }
    }
  }
}
