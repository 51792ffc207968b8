# Exit codes, on_failure steps and the run's output object.
playbook "failing" {
  description = "Post-mortem on failure."
  exit_codes  = { completed = 0, blocked = 2, failed = 3 }
}

step "build" {
  returns = object({ ok = bool })
  shell {
    command = ["make", "build"]
    parse   = "json"
  }
  gate {
    rule "broken" {
      when = "!steps.build.output.ok"
      fail = "debug"
    }
    otherwise {
      log = "Build is fine."
    }
  }
}

step "test" {
  shell {
    script = "make test"
  }
}

on_failure {
  step "postmortem" {
    shell {
      script = "echo ${run.status}: ${run.reason} >> learnings.md"
    }
  }
  step "notify" {
    call "log.write" {
      message = "run ${run.id} failed with ${run.recommendation}"
    }
  }
}

output {
  status      = run.status
  built       = try(steps.build.output.ok, false)
  test_status = steps.test.status
  attempts    = steps.build.attempts
  elapsed     = run.elapsed_s
}
