playbook "use_before_run" {
  description = "A step reads the output of a step that cannot have run before it, or may not have."
}

step "plan" {
  returns = object({ ok = bool })
  shell {
    command = ["echo", "{\"ok\": true}"]
    parse   = "json"
  }
  gate {
    rule "judged" {
      when = "steps.judge.output == 'fine'" # ERROR: Output of a step that cannot have run
      goto = "judge"
    }
    otherwise {}
  }
}

step "maybe" {
  when    = "steps.plan.output.ok"
  returns = object({ ok = bool })
  shell {
    command = ["echo", "{\"ok\": true}"]
    parse   = "json"
  }
}

step "judge" {
  shell {
    command = ["echo", "${steps.maybe.output.ok}"] # WARNING: Output of a step that may not have run
  }
  gate {
    rule "unguarded" {
      when = "steps.maybe.output.ok" # WARNING: Output of a step that may not have run
      log  = "ok"
    }
    rule "guarded" {
      when = "steps.maybe.output?.ok ?? false"
      log  = "${try(steps.maybe.output.ok, false)} ${steps.maybe.status == "completed" ? steps.maybe.output.ok : false}"
    }
    otherwise {}
  }
}
