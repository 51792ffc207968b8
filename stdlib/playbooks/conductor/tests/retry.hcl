# Rejections and failed attempts: the retry queue behind fresh tasks, the
# retry table (same implementer, then a fresh one on sonnet, then
# escalated), max_total_attempts, timeouts and answers without a signal.

include = ["mocks.hcl"]

mock "load_tasks" {
  output = {
    value = {
      tasks = [
        { id = "T1", title = "Auth service", status = "pending", model = "haiku", blocked_by = [],
        acceptance_criteria = [{ id = "AC-1", criterion = "passwords are hashed" }] },
      ]
    }
  }
}

test "a medium rejection goes back to the queue with its feedback" {
  mock "review" {
    outputs = [
      { signal = "REJECTED", severity = "medium", summary = "no test for hashing", issues = ["no test"], required_fixes = ["add a test"] },
      { signal = "APPROVED", summary = "fixed" },
    ]
  }
  expect {
    status = "completed"
    path = [
      "preflight", "load_tasks", "tasks",
      "spawn_implementer", "implement", "implemented", "spawn_reviewer", "review", "retry",
      "spawn_implementer", "implement", "implemented", "spawn_reviewer", "review", "complete",
      "finish",
    ]
    output = {
      task_status      = { T1 = "completed" }
      escalated_models = {}
    }
  }
}

test "a rejection without severity is medium" {
  mock "review" {
    outputs = [
      { signal = "REJECTED", summary = "style" },
      { signal = "APPROVED" },
    ]
  }
  expect {
    status = "completed"
    visits = { implement = 2, retry = 1, escalate = 0 }
  }
}

test "the third attempt is a fresh implementer on sonnet, then the task is escalated" {
  mock "review" {
    output = { signal = "REJECTED", severity = "low", summary = "still wrong" }
  }
  expect {
    status         = "failed"
    recommendation = "needs_intervention"
    visits         = { implement = 3, review = 3, retry = 3, complete = 0, escalate = 0 }
    output = {
      phase            = "implementation"
      task_status      = { T1 = "escalated" }
      escalated_models = { T1 = "sonnet" }
      summary          = { escalated = 1 }
    }
  }
}

test "max_total_attempts caps the retries" {
  inputs = { max_total_attempts = 2 }
  mock "review" {
    output = { signal = "REJECTED", severity = "medium", summary = "still wrong" }
  }
  expect {
    status         = "failed"
    recommendation = "needs_intervention"
    visits         = { implement = 2, retry = 2 }
    output         = { task_status = { T1 = "escalated" }, escalated_models = {} }
  }
}

test "each task is rejected once, requeued and approved" {
  mock "load_tasks" {
    output = {
      value = {
        tasks = [
          { id = "T1", title = "Auth service", status = "pending", model = "opus", blocked_by = [],
          acceptance_criteria = [{ id = "AC-1", criterion = "passwords are hashed" }] },
          { id = "T2", title = "Token service", status = "pending", model = "opus", blocked_by = [],
          acceptance_criteria = [{ id = "AC-2", criterion = "tokens are signed" }] },
        ]
      }
    }
  }
  # One opus implementer at a time; a task in review holds no slot. A
  # mock's answers count per task: each task's first review rejects, its
  # second approves. (That fresh tasks start before requeued ones is
  # interp's TestRequeueRunsBehindFreshItems.)
  mock "review" {
    outputs = [
      { signal = "REJECTED", severity = "medium", summary = "no test" },
      { signal = "APPROVED" },
    ]
  }
  expect {
    status = "completed"
    visits = { preflight = 1, load_tasks = 1, tasks = 1, finish = 1 }
    items = {
      T1 = ["spawn_implementer", "implement", "implemented", "spawn_reviewer", "review", "retry",
      "spawn_implementer", "implement", "implemented", "spawn_reviewer", "review", "complete"]
      T2 = ["spawn_implementer", "implement", "implemented", "spawn_reviewer", "review", "retry",
      "spawn_implementer", "implement", "implemented", "spawn_reviewer", "review", "complete"]
    }
    output = { task_status = { T1 = "completed", T2 = "completed" } }
  }
}

test "a timeout is a failed attempt" {
  mock "implement" {
    error      = "agent timed out after 30m"
    error_kind = "timeout"
  }
  expect {
    status         = "failed"
    recommendation = "needs_intervention"
    visits         = { implement = 3, implemented = 3, review = 0, retry = 3 }
    output         = { task_status = { T1 = "escalated" } }
  }
}

# The check asks again once; a second answer without a signal fails the
# attempt.
test "an answer without a signal is a failed attempt" {
  mock "implement" {
    outputs = [
      { signal = "DONE" },
      { signal = "DONE" },
      { signal = "IMPLEMENTATION_COMPLETE", acceptance_criteria_met = [{ criterion = "AC-1" }] },
    ]
  }
  mock "review" {
    output = { signal = "APPROVED" }
  }
  expect {
    status = "completed"
    visits = { implement = 2, implemented = 2, retry = 1, review = 1 }
  }
}
