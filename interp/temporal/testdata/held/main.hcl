# A for_each whose items ask a person while others run: b directly, c in
# a sub-playbook (./child), whose question holds this run's items too.
playbook "held" {}
step "work" {
  for_each    = "['a', 'b', 'c', 'd']"
  key         = "item"
  concurrency = 2
  step "decide" {
    when = "item == 'b'"
    ask {
      question = "Go on with ${item}?"
      options  = ["yes", "no"]
    }
  }
  step "phase" {
    when = "item == 'c'"
    playbook { source = "./child" }
  }
  step "build" {
    shell { command = ["echo", "built ${item}"] }
  }
}
output {
  completed = steps.work.output.completed
}
