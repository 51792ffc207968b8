playbook "document" {
  description = "Documents that read what does not exist or write outside the project."
}

input "phase" {
  type = string
}

document "state" {
  path    = ".autopilot/state.json"
  backup  = "/tmp/state.json.backup" # ERROR: Document path outside the project
  archive = "../archive/run-${run.id}.json" # ERROR: Document path outside the project
  content = {
    phase  = inputs.phse # ERROR: Reference to undeclared input
    status = steps.reserch.status # ERROR: Reference to undeclared step
    score  = steps.rate.output.scor # ERROR: Unknown output field
    when   = run.started # ERROR: Unknown run attribute
  }
}

document "escape" {
  path    = "../../${inputs.phase}/state.json" # ERROR: Document path outside the project
  content = {}
}

document "state" { # ERROR: Duplicate document
  path    = "" # ERROR: Invalid document path
  content = {}
}

document "no_content" { # ERROR: Missing required argument
  path = "x.json"
}

step "rate" {
  returns = object({ score = number })
  shell {
    command = ["echo", "{\"score\": 9}"]
    parse   = "json"
  }
}

state {
  path = ".apl-state/state.json"
}

document "clobber" {
  path    = ".apl-state/state.json" # ERROR: Document path is the state file
  content = {}
}
