extends = "no_such_dir" # ERROR: Cannot read upstream playbook

playbook "missing" {}
