# Documents on Temporal: written by a worker in its project directory,
# with a backup, one archived when the run completes.
playbook "document" {}
document "state" {
  path    = "out/state.json"
  backup  = "out/state.json.backup"
  archive = "out/archive/state.json"
  content = {
    status = run.status
    items  = try({ for k, it in steps.work.output.items : k => it.status }, {})
    after  = try(trimspace(steps.after.output), null)
  }
}
document "live" {
  path = "out/live.json"
  content = {
    status = run.status
    done   = length([for s in ["work", "after"] : s if steps[s].status == "completed"])
  }
}
step "work" {
  for_each    = "['a', 'b', 'c']"
  key         = "item"
  concurrency = 2
  step "do" {
    shell { command = ["echo", "did ${item}"] }
  }
}
step "after" {
  shell { command = ["echo", "done"] }
}
