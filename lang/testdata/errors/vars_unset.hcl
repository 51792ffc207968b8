playbook "vars_unset" {
  description = "A misspelt vars.NAME that nothing sets."
}

step "check" {
  shell {
    command = ["check"]
    parse   = "lines"
  }
  gate {
    rule "issues" {
      when = "len(steps.check.output) > 0"
      set  = { issues = steps.check.output }
      goto = "fix"
      max  = 2
      on_exhausted {
        fail = "halt"
      }
    }
    otherwise {
      log = "clean"
    }
  }
}

step "fix" {
  when = "len(vars.isues ?? []) > 0" # ERROR: Var never set
  agent "fixer" {
    prompt = "Fix: ${join(", ", vars.issues)}. Focus: ${vars.focus}. Also ${vars.fcous}" # ERROR: Var never set
    vars   = { focus = "tests" }
  }
  next = "done"
}

step "done" {
  shell {
    script = "echo ${length(vars.isues)}" # ERROR: Var never set
  }
}

agent "fixer" {
  type = "claude-code"
}
