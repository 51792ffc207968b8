# Trace aggregation and STEP 6's final pass, on every ending:
# each step agent's {step}-trace.jsonl in the phase directory is appended
# to TRACE.jsonl (unless TRACE.jsonl holds it already), a minimal entry
# stands in for a step that wrote none, and the phase runner adds its own
# spans. Trace failures never block.

locals {
  trace_path  = "${local.phase_dir}/TRACE.jsonl"
  trace_steps = ["research", "plan", "plan_check", "execute", "verify", "judge", "rate", "debug"]
  # The step trace files, in the pipeline's order, then any others.
  trace_found = try(steps.trace_files.output.matches, [])
  trace_files = concat(
    [for s in local.trace_steps : "${local.phase_dir}/${s}-trace.jsonl" if contains(local.trace_found, "${local.phase_dir}/${s}-trace.jsonl")],
    [for f in local.trace_found : f if !contains([for s in local.trace_steps : "${local.phase_dir}/${s}-trace.jsonl"], f)],
  )
  # The agent each step spawned, for the phase runner's spans.
  trace_agents = {
    research   = "gsd-phase-researcher"
    plan       = "gsd-planner"
    plan_check = "gsd-plan-checker"
    execute    = "gsd-executor"
    verify     = "gsd-verifier"
    judge      = "general-purpose (judge)"
    rate       = "general-purpose (rating)"
    debug      = "autopilot-debugger"
  }
  trace_ran = [for s in local.trace_steps : s if steps[s].attempts > 0 || (s == "execute" && steps.execute_batch.attempts > 0)]
}

finally {
  step "trace_files" {
    continue_on_error = true
    call "glob" {
      pattern = "${local.phase_dir}/*-trace.jsonl"
    }
  }

  step "trace_existing" {
    continue_on_error = true
    call "file.read" {
      path = local.trace_path
    }
  }

  step "trace_append" {
    for_each = "local.trace_files"
    # A trace that cannot be appended is lost alone: the other traces and
    # the phase runner's own spans are still written.
    on_item_failure = "continue"

    step "trace_read" {
      call "file.read" {
        path = item
      }
      gate {
        rule "known" {
          when   = "steps.trace_read.output.content == '' || (steps.trace_existing.output?.content ?? '') contains steps.trace_read.output.content"
          finish = "skipped"
          reason = "empty, or already in TRACE.jsonl"
        }
        otherwise {}
      }
    }

    step "trace_write" {
      call "file.append" {
        path    = local.trace_path
        content = endswith(steps.trace_read.output.content, "\n") ? steps.trace_read.output.content : "${steps.trace_read.output.content}\n"
      }
    }
  }

  step "trace_spans" {
    continue_on_error = true
    call "file.append" {
      path = local.trace_path
      content = join("", concat(
        [for s in local.trace_ran : "${jsonencode({
          timestamp      = s == "execute" && steps.execute.attempts == 0 ? steps.execute_batch.started_at : steps[s].started_at
          phase_id       = inputs.phase_id
          step           = s
          action         = "agent_spawn"
          input_summary  = "no ${s}-trace.jsonl was written: minimal entry"
          output_summary = "${s}: ${s == "execute" && steps.execute.attempts == 0 ? steps.execute_batch.status : steps[s].status}"
          duration_ms    = floor((s == "execute" && steps.execute.attempts == 0 ? steps.execute_batch.duration_s : steps[s].duration_s) * 1000)
          status         = (s == "execute" && steps.execute.attempts == 0 ? steps.execute_batch.status : steps[s].status) == "completed" ? "success" : "failure"
        })}\n" if !contains(local.trace_files, "${local.phase_dir}/${s}-trace.jsonl")],
        [for s in local.trace_ran : "${jsonencode({
          timestamp      = s == "execute" && steps.execute.attempts == 0 ? steps.execute_batch.started_at : steps[s].started_at
          phase_id       = inputs.phase_id
          step           = "phase_runner"
          action         = "agent_spawn"
          input_summary  = "Spawning ${local.trace_agents[s]} for phase ${inputs.phase_id}"
          output_summary = substr("Agent ${s == "execute" && steps.execute.attempts == 0 ? steps.execute_batch.status : steps[s].status}: ${s} ran ${s == "execute" && steps.execute.attempts == 0 ? 1 : steps[s].attempts} time(s), ${s == "execute" && steps.execute.attempts == 0 ? steps.execute_batch.tokens : steps[s].tokens} tokens", 0, 200)
          duration_ms    = floor((s == "execute" && steps.execute.attempts == 0 ? steps.execute_batch.duration_s : steps[s].duration_s) * 1000)
          status         = (s == "execute" && steps.execute.attempts == 0 ? steps.execute_batch.status : steps[s].status) == "completed" ? "success" : "failure"
        })}\n"],
        ["${jsonencode({
          timestamp      = timestamp()
          phase_id       = inputs.phase_id
          step           = "phase_runner"
          action         = "decision"
          input_summary  = "Phase pipeline complete"
          output_summary = "Status: ${run.status}, alignment: ${try(steps.rate.output.alignment_score, "n/a")}/10"
          duration_ms    = floor(run.elapsed_s * 1000)
          status         = run.status == "failed" ? "failure" : "success"
        })}\n"],
      ))
    }
  }
}
