# Every prompt template of the phase runner but STEP 0's (the playbook does
# the pre-flight checks itself), one file each in prompts/. The templates'
# {placeholders} are the inputs, and vars the steps pass.

prompt "research" {
  description = "STEP 1: the researcher; on a re-plan, the previous score and issues."
  template    = file("prompts/research.md")
}

prompt "plan" {
  description = "STEP 2: the planner; after a failed plan check, the REVISION REQUIRED addition."
  template    = file("prompts/plan.md")
}

prompt "plan_check" {
  description = "STEP 2.5: the plan checker."
  template    = file("prompts/plan_check.md")
}

prompt "execute" {
  description = "STEP 3: the executor; per task, the INCREMENTAL EXECUTION MODE addition; in remediation, the feedback."
  template    = file("prompts/execute.md")
}

prompt "mini_verify" {
  description = "STEP 3: the mini-verifier of one task."
  template    = file("prompts/mini_verify.md")
}

prompt "verify" {
  description = "STEP 4: the independent verifier; on the verify_only path, the TRIAGE CONTEXT."
  template    = file("prompts/verify.md")
}

prompt "judge" {
  description = "STEP 4.5: the adversarial judge."
  template    = file("prompts/judge.md")
}

prompt "rate" {
  description = "STEP 4.6: the context-isolated rating agent."
  template    = file("prompts/rate.md")
}

prompt "debug" {
  description = "STEP 5a (and a task's debug in STEP 3): the debugger."
  template    = file("prompts/debug.md")
}
