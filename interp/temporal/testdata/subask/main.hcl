playbook "subask" {}
step "release" {
  playbook {
    source = "../ask.hcl"
  }
}
output {
  approved = steps.release.output.approved
  shipped  = steps.release.output.shipped
}
