playbook "followon_max" {
  description = "A max that is present but wrong, with its on_exhausted."
}

step "s" {
  shell {
    command = ["/bin/true"]
  }
  gate {
    otherwise {
      goto = "s"
      max  = 0 # ERROR: Invalid max
      on_exhausted {
        fail = "halt"
      }
    }
  }
}
