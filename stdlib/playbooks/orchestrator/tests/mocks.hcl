# Shared by every test file of stdlib:orchestrator (include =
# ["mocks.hcl"]): the spec is locked by its hash and the checkpoint is the
# head commit. Each file mocks its own roadmap and phase runs.

mock "spec_lock" {
  output = { sha256 = "0123456789abcdef", size = 120 }
}

mock "checkpoint" {
  output = { sha = "f00dfeed", branch = "main" }
}
