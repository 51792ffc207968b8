# One prompt per stage, in prompts/. Each ends with the JSON the stage's
# returns declares.

prompt "discovery" {
  description = "Stage 1: analyse what a high-risk task touches."
  template    = file("prompts/discovery.md")
}

prompt "planning" {
  description = "Stage 2: plan the change; continues the discovery session."
  template    = file("prompts/planning.md")
}

prompt "execution" {
  description = "Stage 3: make the change; after a rejection, with the verifier's issues."
  template    = file("prompts/execution.md")
}

prompt "verification" {
  description = "Stage 4: review the change independently, after the pre-verify gates passed."
  template    = file("prompts/verification.md")
}

prompt "ship" {
  description = "Stage 5: update CHANGELOG.md and docs, or skip."
  template    = file("prompts/ship.md")
}
