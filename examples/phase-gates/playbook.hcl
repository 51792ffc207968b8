# examples/phase-gates: stdlib:phase-runner as a project runs it, offline.
# try.sh runs it in a scratch git project with agent.sh, a script that
# answers as the agents would; each directory of scenarios/ steers the
# phase down one branch of its gates. This file holds only what the fork
# changes (apl diff stdlib:phase-runner examples/phase-gates).
extends = "stdlib:phase-runner"

playbook "phase_gates" {
  description = "stdlib:phase-runner for a project whose roadmap is ROADMAP.md at its root."
}

# The project keeps its roadmap at the root, not in .planning/.
input "roadmap_path" {
  default = "ROADMAP.md"
}
