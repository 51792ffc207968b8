# ROLLBACK: a diagnostic branch, then revert to the last checkpoint,
# preserving history. Never git reset --hard.
#
# The protocol's own bookkeeping is committed before the phase ends,
# either way. Once the executor has committed EXECUTION-LOG.md, the
# mini-verification sections the phase runner appends to it are
# uncommitted changes to a tracked file: git.revert refuses to roll back
# over them, and the next phase's pre-flight finds the tree unclean. So
# the tracked files of the phase directory are committed here: on a pass
# the checkpoint (STEP 6) includes them; on a rollback the commit is part
# of the work the revert undoes, and the diagnostic branch keeps it.
# Changes elsewhere in the tree are not the protocol's and still stop a
# rollback. Outside a git repository the step fails and the run goes on.
step "bookkeeping" {
  continue_on_error = true
  shell {
    command = ["bash", "-c", "git add -u -- \"$1\" && { git diff --cached --quiet || git commit -q -m \"$2\"; }", "bookkeeping",
    local.phase_dir, "chore(${inputs.phase_id}): phase runner bookkeeping"]
  }
  gate {
    rule "rollback" {
      when = "(vars.recommendation ?? '') != ''"
      goto = "rollback"
    }
    otherwise {
      goto = "result"
    }
  }
}

step "rollback" {
  when              = "inputs.last_checkpoint_sha != ''"
  skip_reason       = "no last_checkpoint_sha: nothing to revert to"
  continue_on_error = true
  call "git.revert" {
    from    = inputs.last_checkpoint_sha
    branch  = "autopilot-diagnostic-phase-${inputs.phase_id}"
    message = "rollback: revert to phase ${inputs.phase_id} checkpoint"
  }
  gate {
    rule "failed" {
      when = "steps.rollback.status == 'failed'"
      log  = "Phase ${inputs.phase_id} rollback failed: ${steps.rollback.error}"
    }
    otherwise {
      event   = "rollback_completed"
      details = { phase_id = inputs.phase_id, rollback_from = inputs.last_checkpoint_sha, rollback_to = steps.rollback.output.commit, diagnostic_branch = steps.rollback.output.branch }
    }
  }
}

step "rolled_back" {
  gate {
    otherwise {
      fail   = vars.recommendation
      reason = "Phase ${inputs.phase_id} failed: ${vars.recommendation}%{if steps.rollback.status == "completed"}; rolled back to ${inputs.last_checkpoint_sha} (diagnostic branch ${steps.rollback.output.branch})%{endif}%{if steps.rollback.status == "failed"}; the rollback failed, nothing was reverted: ${steps.rollback.error}%{endif}"
    }
  }
}

# STEP 6: COMPOSE RESULT.
step "result" {
  call "git.head" {}
  log = "Phase ${inputs.phase_id} complete. Alignment: ${local.score_text}/10."
}

step "diff_stat" {
  when        = "inputs.last_checkpoint_sha != ''"
  skip_reason = "no last_checkpoint_sha"
  call "git.diff_stat" {
    from = inputs.last_checkpoint_sha
  }
}
