# The pipeline: the protocol's state machine. Each stage is a step of
# template.stage.

# A stage: an agent that answers success and a summary, and fails softly
# so that its gate can tell an unavailable model (exit 3) from any other
# failure of the stage (exit 1). Every failure sets failed_stage for the
# report's errors.
template "stage" {
  param "stage" {
    type        = string
    description = "The stage's name, in failed_stage and the reasons."
  }
  continue_on_error = true
  gate {
    rule "unavailable" {
      when   = "self.error_kind in ['unavailable', 'rate_limited']"
      set    = { failed_stage = param.stage }
      fail   = "model_unavailable"
      reason = "${param.stage}: the model is unavailable (${self.error_kind}): ${self.error}"
    }
    rule "failed" {
      when   = "self.status == 'failed' || !self.output.success"
      set    = { failed_stage = param.stage }
      fail   = "stage_failed"
      reason = "${param.stage} failed: ${try(self.output.summary, self.error)}"
    }
    otherwise {}
  }
}

# INIT: assess the risk and choose the start stage. The report's run id is
# set here, once, so every ending (even an empty task) has one.
step "assess" {
  gate {
    rule "empty_task" {
      when   = "trim(inputs.task) == ''"
      set    = { report_id = uuid(), failed_stage = "assess" }
      fail   = "risk_assessment_failed"
      reason = "risk assessment failed: the task is empty"
    }
    otherwise {
      set = { report_id = uuid() }
      log = "Risk ${local.risk} (${local.risk_source}): starting at ${local.start_stage}."
    }
  }
}

# Stage 1 (session 1).
step "discovery" {
  use         = template.stage
  with        = { stage = "discovery" }
  timeout     = "20m"
  progress    = "DISCOVERY"
  when        = "local.start <= 1"
  skip_reason = "risk ${local.risk} starts at ${local.start_stage}"
  returns     = object({ success = bool, summary = string })
  agent "discovery" {
    prompt = prompt.discovery
  }
}

# Stage 2, continuing session 1 (a new session when discovery was skipped).
step "planning" {
  use         = template.stage
  with        = { stage = "planning" }
  timeout     = "20m"
  progress    = "PLANNING"
  when        = "local.start <= 2"
  skip_reason = "risk ${local.risk} starts at ${local.start_stage}"
  returns     = object({ success = bool, plan = string, summary = string })
  agent "planner" {
    prompt  = prompt.planning
    session = steps.discovery.session_id
  }
}

# Stage 3 (session 2, continued when verification sends the work back).
step "execution" {
  use         = template.stage
  with        = { stage = "execution" }
  timeout     = "30m"
  progress    = "EXECUTION"
  when        = "local.start <= 3 || steps.verification.attempts > 0"
  skip_reason = "started at ${local.start_stage}"
  returns     = object({ success = bool, summary = string, files_changed = list(string) })
  agent "executor" {
    prompt  = prompt.execution
    session = steps.execution.session_id
  }
}

# PRE_VERIFY: mandatory before every verification, fail-closed. Each gate
# command runs with bash -c; a missing tool exits 127 and fails its item.
step "pre_verify" {
  progress    = "PRE-VERIFY GATES"
  when        = "local.start <= 4"
  skip_reason = "started at ${local.start_stage}: no verification"
  for_each    = "inputs.gate_commands"
  # Every gate runs even when one fails; the gate below turns any failure
  # into exit 4 with all of them in the reason.
  on_item_failure = "continue"

  step "gate_command" {
    timeout = "10m"
    shell {
      command = ["bash", "-c", item]
    }
  }

  gate {
    rule "failed" {
      when = "steps.pre_verify.output.failed > 0"
      set  = { failed_stage = "pre_verify" }
      fail = "gate_failed"
      reason = "pre-verify gate failed: ${join("; ", [for k, it in steps.pre_verify.output.items :
      "${inputs.gate_commands[tonumber(k)]}: ${replace(it.error, "/^step [^(]*\\([^)]*\\): /", "")}" if it.status != "completed"])}${local.default_gates ? local.default_gates_hint : ""}"
    }
    otherwise {
      log = "Pre-flight gates passed: ${join("; ", inputs.gate_commands)}"
    }
  }
}

# Stage 4 (session 3, separate for the verifier's independence). A
# rejection sends the work back to execution once: at most 2
# verifications, then escalate (exit 2).
step "verification" {
  use         = template.stage
  with        = { stage = "verification" }
  timeout     = "20m"
  progress    = "VERIFICATION"
  when        = "local.start <= 4"
  skip_reason = "started at ${local.start_stage}"
  returns     = object({ approved = bool, issues = list(string), summary = string })
  agent "verifier" {
    prompt  = prompt.verification
    session = steps.verification.session_id
  }
  # The verifier answers approved rather than success: a rejection is
  # not a failure of the stage.
  gate {
    rule "failed" {
      when   = "self.status == 'failed'"
      reason = "verification failed: ${self.error}"
    }
    rule "approved" {
      when = "self.output.approved"
      log  = "Verification approved (iteration ${self.attempts}/2)."
    }
    otherwise {
      log  = "Verification rejected (iteration ${self.attempts}/2): ${join("; ", self.output.issues)}. Back to execution."
      goto = "execution"
      max  = 1
      on_exhausted {
        set    = { failed_stage = "verification" }
        fail   = "verification_rejected"
        reason = "verification rejected twice; escalate to a human: ${join("; ", self.output.issues)}"
      }
    }
  }
}

# Stage 5 (session 4): docs only; the agent skips when the change touches
# no docs, API or config.
step "ship" {
  use      = template.stage
  with     = { stage = "ship" }
  timeout  = "10m"
  progress = "SHIP"
  returns  = object({ success = bool, skipped = bool, summary = string })
  agent "docs" {
    prompt = prompt.ship
  }
}
