# A lenient phase runner: stdlib:phase-runner with a lower bar. It holds
# only what it changes; apl diff stdlib:phase-runner examples/phase-runner-lenient
# shows the changes, apl explain where each attribute comes from.
extends = "stdlib:phase-runner"

playbook "phase_runner_lenient" {
  description = "stdlib:phase-runner, passing at 7/10 and re-planning more."
}

input "pass_threshold" {
  default = 7
}

# With 7 as the default, the quality mode makes no sense here.
mode "quality" {
  removed = true
}
