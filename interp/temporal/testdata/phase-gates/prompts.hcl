# Prompt templates, shortened from the phase runner's. Each names the JSON it wants.

prompt "research" {
  template = <<-EOT
    Research phase ${inputs.phase_id}: ${inputs.phase_name}.
    Phase goal: ${inputs.phase_goal}
    %{~ if vars.previous_score != null }
    Previous attempt scored ${vars.previous_score}/10. Issues: ${join("; ", vars.previous_issues)}.
    %{~ endif }
    End with a SUMMARY section of at most 10 lines.
  EOT
}

prompt "plan" {
  template = <<-EOT
    Create a plan for phase ${inputs.phase_id}: ${inputs.phase_name}.
    Phase goal: ${inputs.phase_goal}
    %{~ if length(vars.checker_issues) > 0 }
    REVISION REQUIRED. The plan checker found these issues:
    %{~ for issue in vars.checker_issues }
    - ${issue}
    %{~ endfor }
    Revise the plans to address all blockers.
    %{~ endif }
    End with a SUMMARY section of at most 10 lines.
  EOT
}

prompt "plan_check" {
  template = <<-EOT
    You are verifying plans for phase ${inputs.phase_id}: ${inputs.phase_name}.
    Phase goal: ${inputs.phase_goal}
    Return JSON: {"pass": true|false, "confidence": 1-10, "issues": ["..."]}
  EOT
}

prompt "execute" {
  template = <<-EOT
    Execute the plan for phase ${inputs.phase_id}. Make atomic commits that compile.
    Return JSON: {"tasks_completed": N, "commits": ["sha"], "commands_run": ["cmd"]}
  EOT
}

prompt "verify" {
  template = <<-EOT
    Verify phase ${inputs.phase_id} independently. Run every acceptance criterion's command.
    Return JSON: {"pass": bool, "automated_checks": [{"name": "...", "pass": bool}], "issues": ["..."]}
  EOT
}

prompt "judge" {
  template = <<-EOT
    Judge phase ${inputs.phase_id}: ${inputs.phase_name}. Recommend proceed, debug, rollback or halt.
    Return JSON: {"recommendation": "proceed|debug|rollback|halt", "concerns": ["..."], "reasoning": "..."}
  EOT
}

prompt "rate" {
  template = <<-EOT
    Rate phase ${inputs.phase_id} against its acceptance criteria. Use decimal scores (x.x/10).
    Return JSON: {"alignment_score": 8.5}
  EOT
}

prompt "debug" {
  template = <<-EOT
    Debug phase ${inputs.phase_id}: ${inputs.phase_name}.
    Issues to fix:
    %{~ for issue in steps.verify.output.issues }
    - ${issue}
    %{~ endfor }
    Return JSON: {"fixed": bool, "remaining_issues": ["..."]}
  EOT
}
