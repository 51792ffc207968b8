playbook "child" {}
step "decide" {
  ask {
    question = "Go on in the sub-run?"
    options  = ["yes", "no"]
  }
}
