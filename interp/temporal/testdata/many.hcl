playbook "many" {}
# A large output: the run's state, which its workflow continues as new
# with, goes to the blob store.
step "first" {
  shell { script = "head -c 140000 /dev/zero | tr '\\0' x" }
}
step "work" {
  for_each        = "range(1, 41)"
  key             = "string(item)"
  concurrency     = 4
  on_item_failure = "continue"
  step "do" {
    shell { script = "N=${item}; test $((N % 13)) -ne 0 && echo did $N" }
  }
  step "twice" {
    # Each run of the step leaves a line: a step run twice shows.
    shell { script = "echo ${item} >> ran.txt; echo ${item}${item}" }
  }
}
step "after" {
  shell { script = "echo $(wc -l < ran.txt) ran, $(sort ran.txt | uniq -d | wc -l) twice" }
}
output {
  first = strlen(steps.first.output)
  work  = steps.work.output
  after = trimspace(steps.after.output)
}
