# The pipeline: the protocol's state machine. Each stage's agent fails
# softly (continue_on_error) so that its gate can tell an unavailable
# model (exit 3) from any other failure of the stage (exit 1). Every
# failure sets failed_stage for the report's errors.

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
  timeout           = "20m"
  progress          = "DISCOVERY"
  when              = "local.start <= 1"
  skip_reason       = "risk ${local.risk} starts at ${local.start_stage}"
  returns           = object({ success = bool, summary = string })
  continue_on_error = true
  agent "discovery" {
    prompt = prompt.discovery
  }
  gate {
    rule "unavailable" {
      when   = "steps.discovery.error_kind in ['unavailable', 'rate_limited']"
      set    = { failed_stage = "discovery" }
      fail   = "model_unavailable"
      reason = "discovery: the model is unavailable (${steps.discovery.error_kind}): ${steps.discovery.error}"
    }
    rule "failed" {
      when   = "steps.discovery.status == 'failed' || !steps.discovery.output.success"
      set    = { failed_stage = "discovery" }
      fail   = "stage_failed"
      reason = "discovery failed: ${try(steps.discovery.output.summary, steps.discovery.error)}"
    }
    otherwise {}
  }
}

# Stage 2, continuing session 1 (a new session when discovery was skipped).
step "planning" {
  timeout           = "20m"
  progress          = "PLANNING"
  when              = "local.start <= 2"
  skip_reason       = "risk ${local.risk} starts at ${local.start_stage}"
  returns           = object({ success = bool, plan = string, summary = string })
  continue_on_error = true
  agent "planner" {
    prompt  = prompt.planning
    session = steps.discovery.session_id
  }
  gate {
    rule "unavailable" {
      when   = "steps.planning.error_kind in ['unavailable', 'rate_limited']"
      set    = { failed_stage = "planning" }
      fail   = "model_unavailable"
      reason = "planning: the model is unavailable (${steps.planning.error_kind}): ${steps.planning.error}"
    }
    rule "failed" {
      when   = "steps.planning.status == 'failed' || !steps.planning.output.success"
      set    = { failed_stage = "planning" }
      fail   = "stage_failed"
      reason = "planning failed: ${try(steps.planning.output.summary, steps.planning.error)}"
    }
    otherwise {}
  }
}

# Stage 3 (session 2, continued when verification sends the work back).
step "execution" {
  timeout           = "30m"
  progress          = "EXECUTION"
  when              = "local.start <= 3 || steps.verification.attempts > 0"
  skip_reason       = "started at ${local.start_stage}"
  returns           = object({ success = bool, summary = string, files_changed = list(string) })
  continue_on_error = true
  agent "executor" {
    prompt  = prompt.execution
    session = steps.execution.session_id
  }
  gate {
    rule "unavailable" {
      when   = "steps.execution.error_kind in ['unavailable', 'rate_limited']"
      set    = { failed_stage = "execution" }
      fail   = "model_unavailable"
      reason = "execution: the model is unavailable (${steps.execution.error_kind}): ${steps.execution.error}"
    }
    rule "failed" {
      when   = "steps.execution.status == 'failed' || !steps.execution.output.success"
      set    = { failed_stage = "execution" }
      fail   = "stage_failed"
      reason = "execution failed: ${try(steps.execution.output.summary, steps.execution.error)}"
    }
    otherwise {}
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
  timeout           = "20m"
  progress          = "VERIFICATION"
  when              = "local.start <= 4"
  skip_reason       = "started at ${local.start_stage}"
  returns           = object({ approved = bool, issues = list(string), summary = string })
  continue_on_error = true
  agent "verifier" {
    prompt  = prompt.verification
    session = steps.verification.session_id
  }
  gate {
    rule "unavailable" {
      when   = "steps.verification.error_kind in ['unavailable', 'rate_limited']"
      set    = { failed_stage = "verification" }
      fail   = "model_unavailable"
      reason = "verification: the model is unavailable (${steps.verification.error_kind}): ${steps.verification.error}"
    }
    rule "failed" {
      when   = "steps.verification.status == 'failed'"
      set    = { failed_stage = "verification" }
      fail   = "stage_failed"
      reason = "verification failed: ${steps.verification.error}"
    }
    rule "approved" {
      when = "steps.verification.output.approved"
      log  = "Verification approved (iteration ${steps.verification.attempts}/2)."
    }
    otherwise {
      log  = "Verification rejected (iteration ${steps.verification.attempts}/2): ${join("; ", steps.verification.output.issues)}. Back to execution."
      goto = "execution"
      max  = 1
      on_exhausted {
        set    = { failed_stage = "verification" }
        fail   = "verification_rejected"
        reason = "verification rejected twice; escalate to a human: ${join("; ", steps.verification.output.issues)}"
      }
    }
  }
}

# Stage 5 (session 4): docs only; the agent skips when the change touches
# no docs, API or config.
step "ship" {
  timeout           = "10m"
  progress          = "SHIP"
  returns           = object({ success = bool, skipped = bool, summary = string })
  continue_on_error = true
  agent "docs" {
    prompt = prompt.ship
  }
  gate {
    rule "unavailable" {
      when   = "steps.ship.error_kind in ['unavailable', 'rate_limited']"
      set    = { failed_stage = "ship" }
      fail   = "model_unavailable"
      reason = "ship: the model is unavailable (${steps.ship.error_kind}): ${steps.ship.error}"
    }
    rule "failed" {
      when   = "steps.ship.status == 'failed' || !steps.ship.output.success"
      set    = { failed_stage = "ship" }
      fail   = "stage_failed"
      reason = "ship failed: ${try(steps.ship.output.summary, steps.ship.error)}"
    }
    otherwise {}
  }
}
