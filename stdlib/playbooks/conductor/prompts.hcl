# The protocol's prompt templates, the implementer's and the reviewer's.
# Each agent step passes its JSON input as vars.input,
# built as buildImplementerInput and buildReviewerInput build it.

prompt "implement" {
  description = "Implement one task with the homerun:implement skill."
  template    = file("prompts/implement.md")
}

prompt "review" {
  description = "Review one implementation with the homerun:review skill."
  template    = file("prompts/review.md")
}
