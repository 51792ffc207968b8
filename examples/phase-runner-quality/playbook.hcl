# A quality phase runner: stdlib:phase-runner with a higher bar. It holds
# only what it changes: apl diff stdlib:phase-runner examples/phase-runner-quality.
extends = "stdlib:phase-runner"

playbook "phase_runner_quality" {
  description = "stdlib:phase-runner, passing at 9.5/10, with more time and attempts to debug."
}

input "pass_threshold" {
  default = 9.5
}

input "max_debug_attempts" {
  default = 5
}

# Every debugger (each task's and the phase's) is one template: one
# override gives them all more time.
template "debugger" {
  timeout = "45m"
}
