playbook "conductor" {
  description = "Conductor: a task DAG, per-model limits, a serial review queue and escalation."
}

input "tasks_file" {
  default = ".homerun/tasks.json"
}

limits {
  max_retries = 30
  max_tokens  = 5000000
}

agent "implementer" {
  type = "homerun-implement"
}

agent "reviewer" {
  type  = "homerun-review"
  model = "sonnet"
}

prompt "implement" {
  template = <<-EOT
    Implement task ${vars.task.id}: ${vars.task.title}.
    %{~ if length(vars.feedback) > 0 }
    The reviewer rejected the previous attempt:
    %{~ for f in vars.feedback }
    - ${f}
    %{~ endfor }
    %{~ endif }
  EOT
}

step "load_tasks" {
  returns = object({
    tasks = list(object({
      id         = string
      title      = string
      model      = string
      blocked_by = list(string)
    }))
  })
  shell {
    command = ["cat", inputs.tasks_file]
    parse   = "json"
  }
}

step "tasks" {
  for_each    = "steps.load_tasks.output.tasks"
  key         = "item.id"
  depends_on  = "item.blocked_by"
  concurrency = 3
  # summary decides what failed tasks mean (needs_intervention).
  on_item_failure = "continue"

  limit "model" {
    key = "item.model"
    max = { haiku = 5, sonnet = 3, opus = 1 }
  }

  step "implement_haiku" {
    when = "item.model == 'haiku'"
    agent "implementer" {
      prompt = prompt.implement
      model  = "haiku"
      vars   = { task = item, feedback = try(steps.review.output.feedback, []) }
    }
  }

  step "implement_sonnet" {
    when = "item.model == 'sonnet'"
    agent "implementer" {
      prompt = prompt.implement
      model  = "sonnet"
      vars   = { task = item, feedback = try(steps.review.output.feedback, []) }
    }
  }

  step "implement_opus" {
    when = "item.model == 'opus'"
    agent "implementer" {
      prompt = prompt.implement
      model  = "opus"
      vars   = { task = item, feedback = try(steps.review.output.feedback, []) }
    }
  }

  step "review" {
    serial = true
    returns = object({
      signal   = string
      severity = string
      summary  = string
      feedback = list(string)
    })
    agent "reviewer" {
      prompt = <<-EOT
        Review task ${item.id}: ${item.title}.
        Return JSON: {"signal": "APPROVED|REJECTED", "severity": "low|medium|high",
        "summary": "...", "feedback": ["..."]}
      EOT
    }
    check "signal" {
      condition = "steps.review.output.signal in ['APPROVED', 'REJECTED']"
      message   = "signal must be APPROVED or REJECTED"
    }
    gate {
      rule "approved" {
        when = "steps.review.output.signal == 'APPROVED'"
        log  = "Task ${item.id} approved."
      }
      rule "high" {
        when = "steps.review.output.severity == 'high'"
        log  = "Task ${item.id} rejected with high severity; escalating."
      }
      otherwise {
        log  = "Task ${item.id} rejected (${steps.review.output.severity}); retrying with feedback."
        goto = "implement_haiku"
        max  = 3
        on_exhausted {
          fail   = "escalated"
          reason = "task ${item.id} still rejected after 3 retries"
        }
      }
    }
  }

  step "escalate" {
    when = "steps.review.output.signal == 'REJECTED'"
    ask {
      question = "Task ${item.id} failed with high severity: ${steps.review.output.summary}. How would you like to proceed?"
      options  = ["retry", "mark_fixed", "skip", "abort"]
      default  = "retry"
    }
    gate {
      rule "retry" {
        when = "steps.escalate.output == 'retry'"
        goto = "implement_haiku"
        max  = 1
        on_exhausted {
          fail   = "escalated"
          reason = "task ${item.id} was escalated twice"
        }
      }
      rule "skip" {
        when   = "steps.escalate.output == 'skip'"
        finish = "skipped"
        reason = "skipped by a person; dependents go on"
      }
      rule "abort" {
        when   = "steps.escalate.output == 'abort'"
        fail   = "aborted"
        reason = "aborted by a person; dependents are blocked"
      }
      otherwise {
        log = "Task ${item.id} marked as fixed."
      }
    }
  }
}

step "summary" {
  shell {
    command = ["echo", "${steps.tasks.output.completed} done, ${steps.tasks.output.failed} failed, ${steps.tasks.output.blocked} blocked"]
  }
  gate {
    rule "incomplete" {
      when   = "steps.tasks.output.failed + steps.tasks.output.blocked > 0"
      fail   = "needs_intervention"
      reason = "some tasks failed or are blocked"
    }
    otherwise {}
  }
}

output {
  completed = try(steps.tasks.output.completed, 0)
  failed    = try([for k, t in steps.tasks.output.items : k if t.status == "failed"], [])
  blocked   = try([for k, t in steps.tasks.output.items : k if t.status == "blocked"], [])
}
