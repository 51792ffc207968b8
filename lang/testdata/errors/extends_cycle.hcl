extends = "extends_cycle.hcl" # ERROR: Playbook extends itself

playbook "cycle" {}
