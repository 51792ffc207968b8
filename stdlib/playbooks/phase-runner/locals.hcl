# What the phase runner reads out of the files and records it has: the
# phase directory, the pre-flight findings, the triage criteria and
# routing, the tasks of PLAN.md and the scope. Locals are derived from the
# run's records whenever they are read, so a re-plan's PLAN.md is parsed
# again without anyone assigning it.

locals {
  # Phase Directory Resolution: Glob('.planning/phases/*{phase_id}*').
  phase_dir = try(steps.locate.output.matches[0], ".planning/phases/${inputs.phase_id}")

  # The protocol's {ui|protocol|data|mixed}: no input says it, so the agents
  # classify the phase.
  phase_type = "ui, protocol, data or mixed: classify the phase from its goal and description"

  # Remediation mode (STEP 5): feedback and a cycle > 0; treated as
  # existing_plan and skip_research.
  remediation = inputs.remediation_cycle > 0 && length(inputs.remediation_feedback) > 0
  use_plan    = inputs.existing_plan || local.remediation

  # STEP 0: what fails the pre-flight. Untracked files do not make the tree
  # unclean: the phase runner writes TRIAGE.json, EXECUTION-LOG.md and
  # TRACE.jsonl itself, and git.revert refuses only tracked changes.
  changed_files = [for f in try(steps.preflight.output.files, []) : f.path if f.status != "??"]
  missing_dependencies = [for d in inputs.completed_phase_dirs : d
    if !contains(try(steps.dependencies.output.matches, []), "${trimsuffix(trimprefix(d, "./"), "/")}/EXECUTION-LOG.md")
  ]
  preflight_issues = concat(
    steps.spec_hash.status == "failed" ? ["cannot hash the frozen spec ${inputs.spec_path}: ${steps.spec_hash.error}"] : [],
    steps.preflight.status == "failed" ? ["git status failed: ${steps.preflight.error}"] : [],
    length(local.changed_files) > 0 ? ["working tree not clean: ${join(", ", local.changed_files)}"] : [],
    [for d in local.missing_dependencies : "dependency not complete: ${d} has no EXECUTION-LOG.md"],
  )
  unresolved_debug = try(steps.debug_files.output.matches, [])

  # STEP 0.5: the criteria "{description} -- verified by: `{command}`",
  # from PLAN.md or from the roadmap's entry for this phase: its heading
  # ("Phase 6.3", not "Phase 6.31") up to the next heading naming a phase.
  roadmap_content  = local.use_plan ? try(steps.roadmap.output.content, "") : try(steps.triage_source.output.content, "")
  roadmap_sections = split("\n#", "\n${local.roadmap_content}")
  roadmap_start = try([for i, s in local.roadmap_sections : i
    if can(regex("Phase[ ]+${replace(inputs.phase_id, ".", "[.]")}([^0-9.]|[.][^0-9]|$)", split("\n", s)[0]))
  ][0], -1)
  roadmap_end = try([for i, s in local.roadmap_sections : i
    if i > local.roadmap_start && can(regex("Phase[ ]+[0-9]", split("\n", s)[0]))
  ][0], length(local.roadmap_sections))
  roadmap_entry = local.roadmap_start < 0 ? "" : join("\n#", slice(local.roadmap_sections, local.roadmap_start, local.roadmap_end))
  # What the prompts say of the phase: the inputs, else its roadmap entry
  # ("## Phase 6.3: loader", a "Goal:" line), else words that say what
  # is missing. A prompt never renders an empty value.
  roadmap_name = try(trimspace(replace(regex("Phase[ ]+[0-9][0-9.]*([^\n]*)", local.roadmap_entry)[0], "/^[:. -]+/", "")), "")
  roadmap_goal = try(trimspace(regex("(?mi)^[*_ ]*goal[*_ ]*:[*_ ]*(.*)$", local.roadmap_entry)[0]), "")
  phase_name   = inputs.phase_name != "" ? inputs.phase_name : local.roadmap_name
  phase_title  = local.phase_name != "" ? "${inputs.phase_id}: ${local.phase_name}" : inputs.phase_id
  phase_goal   = inputs.phase_goal != "" ? inputs.phase_goal : local.roadmap_goal != "" ? local.roadmap_goal : "(no goal line given: take the goal from the phase description)"
  phase_description = (inputs.phase_description != "" ? inputs.phase_description
    : trimspace(local.roadmap_entry) != "" ? trimspace(local.roadmap_entry)
  : "(no description given and no roadmap entry for phase ${inputs.phase_id} in ${inputs.roadmap_path != "" ? inputs.roadmap_path : "(no roadmap)"})")
  spec_text = inputs.spec_path != "" ? inputs.spec_path : "(no frozen spec was given: the phase description is the specification)"
  # The requirements of this phase: the input, else the roadmap's
  # criteria for it, else where to find them.
  requirements = (inputs.requirements_list != "" ? inputs.requirements_list
    : length(local.roadmap_criteria) > 0 ? join("\n", [for c in local.roadmap_criteria : "- ${c}"])
    : inputs.spec_path != "" ? "the requirements of the frozen spec at ${inputs.spec_path} that concern phase ${inputs.phase_id}"
  : "derive them from the phase goal and description")
  roadmap_criteria = [for m in regexall(local.criterion_pattern, local.roadmap_entry) : "${trimspace(m[0])} -- verified by: `${m[1]}`"]
  prior_summaries  = inputs.completed_phase_summaries != "" ? inputs.completed_phase_summaries : "(none: no phase was completed before this one)"
  prior_dirs       = length(inputs.completed_phase_dirs) > 0 ? join(", ", inputs.completed_phase_dirs) : "(none: no phase was completed before this one)"
  # The commit the phase's changes are compared with: the checkpoint, else
  # HEAD when the phase runner started.
  base_sha  = inputs.last_checkpoint_sha != "" ? inputs.last_checkpoint_sha : try(steps.base.output.sha, "")
  diff_base = local.base_sha != "" ? local.base_sha : "HEAD~1"

  criteria_text = local.use_plan ? try(steps.triage_source.output.content, "") : local.roadmap_entry
  criteria      = [for m in regexall(local.criterion_pattern, local.criteria_text) : { criterion = trimspace(m[0]), command = m[1] }]
  # A list item (or a plain line) holding the description, " -- verified
  # by: " and the command in backquotes.
  criterion_pattern = "(?m)^[ \t]*(?:[-*+][ \t]+|[0-9]+[.)][ \t]+)?(?:\\[[ xX]\\][ \t]+)?(.*?)[ \t]+--[ \t]+verified by:[ \t]*`([^`]+)`"

  triage_total  = try(steps.triage.output.completed + steps.triage.output.failed, 0)
  pass_ratio    = local.triage_total == 0 ? 0 : steps.triage.output.completed / local.triage_total
  routing       = local.pass_ratio > 0.8 ? "verify_only" : "full_pipeline"
  triage_source = length(local.criteria) == 0 ? "none" : local.use_plan ? "plan" : "roadmap"
  criteria_checked = [for i, c in local.criteria : {
    criterion = c.criterion
    command   = c.command
    result    = try(steps.triage.output.items[tostring(i)].status, "") == "completed" ? "pass" : "fail"
    output = substr(trimspace(coalesce(
      try(steps.triage.output.items[tostring(i)].outputs.criterion, ""),
      try(steps.triage.output.items[tostring(i)].error, ""),
      " ",
    )), 0, 200)
  }]

  # STEP 3: the tasks of PLAN.md, <task id="XX-YY" type="auto"
  # complexity="simple|medium|complex"> with <name>, <files> and criterion
  # lines; index counts from 1.
  task_elements = regexall("(?s)<task[ \t\r\n]([^>]*)>(.*?)</task>", try(steps.plan_tasks.output.content, ""))
  tasks = [for i, m in local.task_elements : {
    index       = i + 1
    id          = try(regex("(?:^|[ \t\r\n])id=\"([^\"]+)\"", m[0])[0], "task-${i + 1}")
    type        = try(regex("type=\"([^\"]+)\"", m[0])[0], "auto")
    complexity  = try(regex("complexity=\"([^\"]+)\"", m[0])[0], "")
    description = try(trimspace(regex("(?s)<name>(.*?)</name>", m[1])[0]), "") != "" ? try(trimspace(regex("(?s)<name>(.*?)</name>", m[1])[0]), "") : "(no <name> in PLAN.md: read the task's element there)"
    files       = try(regexall("[^,\\s]+", regex("(?s)<files>(.*?)</files>", m[1])[0]), [])
    criteria    = [for c in regexall(local.criterion_pattern, m[1]) : "${trimspace(c[0])} -- verified by: `${c[1]}`"]
  }]
  # The tasks an executor runs: checkpoint tasks (checkpoint:human-verify)
  # are the verifier's and the person's, not the executor's.
  auto_tasks       = [for i, t in [for t in local.tasks : t if !startswith(t.type, "checkpoint:")] : merge(t, { position = i + 1 })]
  checkpoint_tasks = [for t in local.tasks : t if t.type == "checkpoint:human-verify"]

  # STEP 4.7: the scope. Files a feedback item names: a path with a slash,
  # or a name.ext followed by :line.
  plan_files = distinct(flatten([for t in local.tasks : t.files]))
  feedback_files = distinct(flatten([for f in inputs.remediation_feedback : concat(
    regexall("[A-Za-z0-9_.-]*/[A-Za-z0-9_./-]*[.][A-Za-z0-9]{1,5}\\b", f),
    [for m in regexall("(?:^|[\\s(])([A-Za-z0-9_-][A-Za-z0-9_.-]*[.][A-Za-z0-9]{1,5}):[0-9]", f) : m[0]],
  )]))
  complex_tasks = length([for t in local.tasks : t if t.complexity == "complex"])
  split_reason = (
    local.remediation && length(inputs.remediation_feedback) > 3 && length(local.feedback_files) >= 4
    ? "remediation feedback has ${length(inputs.remediation_feedback)} issues spanning ${length(local.feedback_files)} files"
    : local.complex_tasks > 5 ? "the plan has ${local.complex_tasks} complex tasks (more than 5)"
    : length(local.plan_files) > 10 ? "the plan touches ${length(local.plan_files)} files (more than 10)"
    : ""
  )
  # The sub-phases a split recommends: the feedback 3 issues at a time, or
  # the plan's tasks 5 at a time, lettered 6.3a, 6.3b, ...
  split_groups = local.remediation ? [for g in chunklist(inputs.remediation_feedback, 3) : {
    scope      = join("; ", g)
    issues     = g
    complexity = "medium"
    }] : [for g in chunklist(local.tasks, 5) : {
    scope      = join("; ", [for t in g : "${t.id}: ${t.description}"])
    issues     = [for t in g : t.id]
    complexity = contains([for t in g : t.complexity], "complex") ? "complex" : contains([for t in g : t.complexity], "medium") ? "medium" : "simple"
  }]
  sub_phases = [for i, g in local.split_groups : {
    sub_phase_id         = "${inputs.phase_id}${substr("abcdefghijklmnopqrstuvwxyz", i, 1)}"
    name                 = "${inputs.phase_name != "" ? inputs.phase_name : "Phase ${inputs.phase_id}"} (part ${i + 1} of ${length(local.split_groups)})"
    scope                = g.scope
    issues               = g.issues
    estimated_complexity = g.complexity
  }]

  # The alignment score as the protocol writes it, x.x (9.0, not 9).
  score_text = try(floor(steps.rate.output.alignment_score) == steps.rate.output.alignment_score ? format("%.1f", steps.rate.output.alignment_score) : tostring(steps.rate.output.alignment_score), "n/a")

  # STEP 4 and STEP 5: whether the automated checks pass ("n/a" and a
  # missing build count as passing).
  checks_pass = try(
    steps.verify.output.automated_checks.compile.status != false
    && steps.verify.output.automated_checks.lint.status != false
    && try(steps.verify.output.automated_checks.build.status, true) != false,
    false,
  )
  failing_checks = [for k, c in try(steps.verify.output.automated_checks, {}) : "${k}: ${try(coalesce(c.detail, ""), "")}" if try(c.status == false, false)]
  # Case 2 of the human-verify checkpoint: a plan of checkpoint tasks only.
  pure_human_verify = length(local.tasks) > 0 && length(local.auto_tasks) == 0

  # The history of the verify rounds and debug attempts, in order (set by
  # the rate and debug gates): the issues of a failure, chronologically,
  # and the post-mortem's timeline and attempted fixes.
  history = try(vars.history, [])
  # What a debug attempt is given: the verifier's failures (and the failing
  # checks and the judge's concerns), then the last attempt's remaining.
  last_debug = try([for e in local.history : e if e.step == "debug"][length([for e in local.history : e if e.step == "debug"]) - 1], null)
  debug_issues = (local.last_debug != null && try(length(local.last_debug.remaining), 0) > 0 && try(local.last_debug.attempt, 0) == steps.debug.attempts - 1
    ? local.last_debug.remaining
    : concat(try(steps.verify.output.failures, []), try(steps.judge.output.recommendation, "") == "debug" ? try(steps.judge.output.concerns, []) : [])
  )

  # Why the judge stops the phase: its notes, else its concerns.
  judge_reason = try(coalesce(steps.judge.output.notes, ""), join("; ", steps.judge.output.concerns))
}
