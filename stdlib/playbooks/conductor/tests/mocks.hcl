# Shared by every test file of stdlib:conductor (include = ["mocks.hcl"]):
# the pre-flight finds a clean tree, and an implementer completes its task
# and names a test for each acceptance criterion. Each file mocks its own
# task DAG (load_tasks) and reviews.

mock "preflight" {
  output = { clean = true, files = [] }
}

mock "implement" {
  output = {
    signal                  = "IMPLEMENTATION_COMPLETE"
    acceptance_criteria_met = [{ criterion = "AC-1", test_location = "t:1" }, { criterion = "AC-2", test_location = "t:2" }]
  }
}
