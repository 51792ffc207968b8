# Validation errors, blocked dependents and deadlock: needs_intervention.

include = ["mocks.hcl"]

mock "load_tasks" {
  output = {
    value = {
      tasks = [
        { id = "T1", title = "User model", status = "pending", model = "sonnet", blocked_by = [], test_file = "tests/user.test.ts",
        acceptance_criteria = [{ id = "AC-1", criterion = "a user has an email" }, { id = "AC-2", criterion = "emails are unique" }] },
        { id = "T2", title = "Login endpoint", status = "pending", model = "sonnet", blocked_by = ["T1"],
        acceptance_criteria = [{ id = "AC-3", criterion = "POST /login" }] },
      ]
    }
  }
}

mock "implement" {
  output = {
    signal    = "IMPLEMENTATION_COMPLETE"
    test_file = "tests/user.test.ts"
    acceptance_criteria_met = [
      { criterion = "AC-1", test_location = "tests/user.test.ts:3" },
      { criterion = "emails are unique", test_location = "tests/user.test.ts:9" },
      { criterion = "AC-3" },
    ]
  }
}

mock "review" {
  output = { signal = "APPROVED", summary = "fine" }
}

test "criteria matched by id or text; a missing test reference is only a warning" {
  expect {
    status = "completed"
    visits = { implement = 2, review = 2, retry = 0 }
    output = { task_status = { T1 = "completed", T2 = "completed" } }
  }
}

test "approved but untraceable goes back to the implementer" {
  mock "implement" {
    outputs = [
      { signal = "IMPLEMENTATION_COMPLETE", acceptance_criteria_met = [{ criterion = "AC-1" }] },
      {
        signal                  = "IMPLEMENTATION_COMPLETE"
        test_file               = "tests/user.test.ts"
        acceptance_criteria_met = [{ criterion = "AC-1" }, { criterion = "AC-2" }, { criterion = "AC-3" }]
      },
    ]
  }
  expect {
    status = "completed"
    # Each task's first answer misses criteria (T1 also its test_file):
    # approved, then back to the implementer; the second holds.
    visits = { implement = 4, review = 4, retry = 2, complete = 2 }
  }
}

test "the implementer's VALIDATION_ERROR fails the task and blocks its dependents" {
  mock "implement" {
    output = { signal = "VALIDATION_ERROR", errors = ["acceptance criteria have no text"] }
  }
  expect {
    status         = "failed"
    recommendation = "needs_intervention"
    visits         = { implement = 1, review = 0 }
    output = {
      phase       = "implementation"
      task_status = { T1 = "validation_error", T2 = "blocked" }
      summary     = { validation_error = 1, blocked = 1 }
    }
  }
}

test "the reviewer's VALIDATION_ERROR: one more review, then the task fails" {
  mock "review" {
    output = { signal = "VALIDATION_ERROR", errors = ["no commit_hash"] }
  }
  expect {
    status         = "failed"
    recommendation = "needs_intervention"
    visits         = { implement = 1, review = 2 }
    output         = { task_status = { T1 = "validation_error", T2 = "blocked" } }
  }
}

test "a task without acceptance criteria is not spawned" {
  mock "load_tasks" {
    output = { value = { tasks = [{ id = "T1", title = "Vague", status = "pending", blocked_by = [] }] } }
  }
  expect {
    status         = "failed"
    recommendation = "needs_intervention"
    path           = ["preflight", "load_tasks", "tasks", "spawn_implementer", "finish"]
    output         = { task_status = { T1 = "validation_error" } }
  }
}

test "an escalated task blocks its dependents" {
  mock "review" {
    output = { signal = "REJECTED", severity = "low", summary = "naming" }
  }
  expect {
    status         = "failed"
    recommendation = "needs_intervention"
    visits         = { implement = 3, review = 3 }
    output         = { task_status = { T1 = "escalated", T2 = "blocked" } }
  }
}

test "deadlock needs intervention" {
  mock "load_tasks" {
    output = {
      value = {
        tasks = [
          { id = "T1", title = "A", status = "pending", blocked_by = ["T2"], acceptance_criteria = [{ id = "AC-1" }] },
          { id = "T2", title = "B", status = "pending", blocked_by = ["T1"], acceptance_criteria = [{ id = "AC-2" }] },
          { id = "T3", title = "C", status = "pending", blocked_by = ["T9"], acceptance_criteria = [{ id = "AC-3" }] },
        ]
      }
    }
  }
  expect {
    status         = "failed"
    recommendation = "needs_intervention"
    path           = ["preflight", "load_tasks", "tasks", "finish"]
    output         = { task_status = { T1 = "pending", T2 = "pending", T3 = "pending" } }
  }
}
