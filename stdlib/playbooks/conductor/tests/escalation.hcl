# High severity and blocked implementers: no new task starts and a person
# decides (retry with guidance, mark fixed, skip, return to planning); a
# high-severity rejection moves a haiku task to sonnet.

include = ["mocks.hcl"]

# A person's guidance, wherever a test retries with guidance.
mock "guidance" {
  output = "keep the old signatures as wrappers"
}

mock "load_tasks" {
  output = {
    value = {
      tasks = [
        { id = "T1", title = "Rework the public API", status = "pending", model = "haiku", blocked_by = [],
        acceptance_criteria = [{ id = "AC-1", criterion = "old callers keep working" }] },
        { id = "T2", title = "Document the API", status = "pending", model = "haiku", blocked_by = ["T1"],
        acceptance_criteria = [{ id = "AC-2", criterion = "README explains it" }] },
      ]
    }
  }
}

# Each task's first review is a high-severity rejection.
mock "review" {
  outputs = [
    { signal = "REJECTED", severity = "high", summary = "breaks every caller", issues = [{ description = "signature changed", severity = "high" }] },
    { signal = "APPROVED" },
  ]
}

# T2 waits for the one opus slot; once T1 asks, no new task starts and the
# run waits for the answer.
# T1 gives its opus slot to T2 when it joins the review queue, so both are
# reviewed, and both wait for a person.
test "high severity asks a person" {
  mock "load_tasks" {
    output = {
      value = {
        tasks = [
          { id = "T1", title = "Rework the public API", status = "pending", model = "opus", blocked_by = [],
          acceptance_criteria = [{ id = "AC-1", criterion = "old callers keep working" }] },
          { id = "T2", title = "Design the cache", status = "pending", model = "opus", blocked_by = [],
          acceptance_criteria = [{ id = "AC-2", criterion = "entries expire" }] },
        ]
      }
    }
  }
  expect {
    status = "waiting"
    visits = { preflight = 1, load_tasks = 1, tasks = 1, finish = 0 }
    items = {
      T1 = ["spawn_implementer", "implement", "implemented", "spawn_reviewer", "review", "escalate"]
      T2 = ["spawn_implementer", "implement", "implemented", "spawn_reviewer", "review", "escalate"]
    }
  }
}

test "retry with guidance: the haiku task runs again on sonnet" {
  mock "escalate" {
    output = "retry_with_guidance"
  }
  expect {
    status = "completed"
    path = [
      "preflight", "load_tasks", "tasks",
      "spawn_implementer", "implement", "implemented", "spawn_reviewer", "review", "escalate", "guidance",
      "spawn_implementer", "implement", "implemented", "spawn_reviewer", "review", "complete",
      "spawn_implementer", "implement", "implemented", "spawn_reviewer", "review", "escalate", "guidance",
      "spawn_implementer", "implement", "implemented", "spawn_reviewer", "review", "complete",
      "finish",
    ]
    output = {
      task_status      = { T1 = "completed", T2 = "completed" }
      escalated_models = { T1 = "sonnet", T2 = "sonnet" }
    }
  }
}

test "a high severity issue in the list counts too" {
  mock "review" {
    outputs = [
      { signal = "REJECTED", severity = "medium", summary = "mixed", issues = ["naming", { description = "data loss", severity = "high" }] },
      { signal = "APPROVED" },
    ]
  }
  mock "escalate" {
    output = "retry_with_guidance"
  }
  expect {
    status = "completed"
    visits = { escalate = 2, retry = 0 }
    output = { escalated_models = { T1 = "sonnet", T2 = "sonnet" } }
  }
}

test "mark fixed completes the task" {
  mock "escalate" {
    output = "mark_fixed"
  }
  expect {
    status = "completed"
    visits = { implement = 2, escalate = 2, complete = 2 }
    output = { task_status = { T1 = "completed", T2 = "completed" } }
  }
}

test "skip unblocks the dependents" {
  mock "escalate" {
    output = "skip"
  }
  expect {
    status = "completed"
    visits = { implement = 2, escalate = 2, complete = 0 }
    output = {
      phase       = "completion"
      task_status = { T1 = "skipped", T2 = "skipped" }
    }
  }
}

test "return to planning" {
  mock "escalate" {
    output = "return_to_planning"
  }
  expect {
    status = "return_to_planning"
    visits = { implement = 1, escalate = 1 }
    output = {
      phase       = "planning"
      task_status = { T1 = "return_to_planning", T2 = "blocked" }
    }
  }
}

test "retry with guidance stops at max_total_attempts" {
  inputs = { max_total_attempts = 2 }
  mock "review" {
    output = { signal = "REJECTED", severity = "high", summary = "still breaks callers" }
  }
  mock "escalate" {
    output = "retry_with_guidance"
  }
  expect {
    status         = "failed"
    recommendation = "needs_intervention"
    visits         = { implement = 2, escalate = 2 }
    output         = { task_status = { T1 = "escalated", T2 = "blocked" } }
  }
}

test "a blocked implementer asks a person" {
  mock "implement" {
    outputs = [
      { signal = "IMPLEMENTATION_BLOCKED", reason = "the API spec is missing" },
      { signal = "IMPLEMENTATION_COMPLETE", acceptance_criteria_met = [{ criterion = "AC-1" }, { criterion = "AC-2" }] },
    ]
  }
  mock "review" {
    output = { signal = "APPROVED" }
  }
  mock "escalate" {
    output = "retry_with_guidance"
  }
  expect {
    status = "completed"
    visits = { implement = 4, escalate = 2, review = 2 }
    # Blocked is not a quality problem: the model stays.
    output = { escalated_models = {} }
  }
}

test "a blocked implementer waits for a person" {
  mock "implement" {
    output = { signal = "IMPLEMENTATION_BLOCKED", reason = "the API spec is missing" }
  }
  expect {
    status = "waiting"
    path   = ["preflight", "load_tasks", "tasks", "spawn_implementer", "implement", "implemented", "escalate"]
  }
}
