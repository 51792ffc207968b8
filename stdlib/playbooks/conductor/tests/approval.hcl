# The happy path: a DAG of three tasks, every review approves.

include = ["mocks.hcl"]

mock "load_tasks" {
  output = {
    value = {
      tasks = [
        { id = "T1", title = "Create user model", status = "pending", model = "haiku", blocked_by = [], test_file = "tests/user.test.ts",
        acceptance_criteria = [{ id = "AC-1", criterion = "a user has an email" }] },
        { id = "T2", title = "Auth service", status = "pending", model = "sonnet", blocked_by = ["T1"],
        acceptance_criteria = [{ id = "AC-2", criterion = "login works" }] },
        { id = "T3", title = "Login endpoint", status = "pending", model = "opus", blocked_by = ["T2"],
        acceptance_criteria = [{ id = "AC-3", criterion = "POST /login" }] },
      ]
    }
  }
}

mock "implement" {
  output = {
    signal        = "IMPLEMENTATION_COMPLETE"
    files_changed = ["src/a.ts"]
    test_file     = "tests/user.test.ts"
    commit_hash   = "abc1234"
    acceptance_criteria_met = [
      { criterion = "AC-1", test_location = "tests/user.test.ts:3" },
      { criterion = "AC-2", test_location = "tests/auth.test.ts:3" },
      { criterion = "AC-3", test_location = "tests/login.test.ts:3" },
    ]
  }
}

mock "review" {
  output = { signal = "APPROVED", summary = "looks good", verified = ["AC-1"] }
}

test "every task approved" {
  expect {
    status = "completed"
    path = [
      "preflight", "load_tasks", "tasks",
      "spawn_implementer", "implement", "implemented", "spawn_reviewer", "review", "complete",
      "spawn_implementer", "implement", "implemented", "spawn_reviewer", "review", "complete",
      "spawn_implementer", "implement", "implemented", "spawn_reviewer", "review", "complete",
      "finish",
    ]
    output = {
      phase   = "completion"
      summary = { completed = 3 }
    }
  }
}

test "subtasks run instead of their parent, which completes with them" {
  mock "load_tasks" {
    output = {
      value = {
        tasks = [
          { id = "T1", title = "Done before", status = "completed", model = "haiku", blocked_by = [],
          acceptance_criteria = [{ id = "AC-1", criterion = "x" }] },
          { id = "T2", title = "Parent", status = "pending", model = "opus", blocked_by = ["T1"], subtasks = [
            { id = "T2.1", title = "First half", status = "pending", blocked_by = [], acceptance_criteria = [{ id = "AC-2", criterion = "y" }] },
            { id = "T2.2", title = "Second half", status = "pending", blocked_by = ["T2.1"], acceptance_criteria = [{ id = "AC-3", criterion = "z" }] },
          ] },
          { id = "T3", title = "After the parent", status = "pending", model = "haiku", blocked_by = ["T2"],
          acceptance_criteria = [{ id = "AC-3", criterion = "z" }] },
        ]
      }
    }
  }
  mock "implement" {
    output = {
      signal                  = "IMPLEMENTATION_COMPLETE"
      acceptance_criteria_met = [{ criterion = "AC-2", test_location = "t:1" }, { criterion = "AC-3", test_location = "t:2" }]
    }
  }
  expect {
    status = "completed"
    visits = { implement = 3, review = 3, complete = 3 }
    output = {
      phase       = "completion"
      task_status = { T1 = "completed", T2 = "completed", "T2.1" = "completed", "T2.2" = "completed", T3 = "completed" }
    }
  }
}

test "nothing to do" {
  mock "load_tasks" {
    output = { value = { tasks = [{ id = "T1", title = "Done", status = "completed", blocked_by = [], acceptance_criteria = [] }] } }
  }
  expect {
    status = "completed"
    path   = ["preflight", "load_tasks", "tasks", "finish"]
    output = { summary = { completed = 1 } }
  }
}

test "a dirty tree stops before any agent" {
  mock "preflight" {
    output = { clean = false, files = [{ path = "src/wip.ts", status = " M" }] }
  }
  expect {
    status         = "failed"
    recommendation = "dirty_worktree"
    path           = ["preflight"]
  }
}

test "a tasks file without tasks" {
  mock "load_tasks" {
    output = { value = { phase = "planning" } }
  }
  expect {
    status         = "failed"
    recommendation = "invalid_tasks_file"
    path           = ["preflight", "load_tasks"]
  }
}
