playbook "builtin_call" {
  description = "A builtin's argument name or output field misspelt."
}

step "hash" {
  call "file.sha256" {
    pth = "spec.md" # ERROR: Unsupported argument
  }
}

step "write" {
  call "file.write" { # ERROR: Missing required argument
    path = "out.txt"
  }
}

step "read" {
  call "file.read" {
    path = ["a", "b"] # ERROR: Invalid argument type
  }
}

step "log" {
  shell {
    script = "echo ${steps.hash.output.sha265}" # ERROR: Unknown output field
  }
  gate {
    rule "changed" {
      when = "steps.hash.output.sise > 0" # ERROR: Unknown output field
      log  = "size ${steps.hash.output.size}"
    }
    otherwise {
      log = "sha ${steps.hash.output.sha256}"
    }
  }
}
