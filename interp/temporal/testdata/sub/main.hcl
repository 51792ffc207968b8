# A playbook that runs another, from its files (./child), once and per
# item; the child's agent calls spend tokens, which count toward this
# run's cap.
playbook "sub" {}
limits {
  max_tokens = 200
}
# The child's driver, declared here too: a local sub-run is served by
# the drivers of the run that runs it.
driver "counted" {
  type    = "command"
  command = ["sh", "-c", "cat >/dev/null; printf '{\"text\": \"ok\", \"usage\": {\"input_tokens\": 60}}'"]
  output  = "json"
}
step "once" {
  playbook {
    source = "./child"
    inputs = { word = "one" }
  }
}
step "each" {
  for_each    = "['a', 'b']"
  key         = "item"
  concurrency = 1
  step "run" {
    playbook {
      source = "./child"
      inputs = { word = item }
    }
  }
}
step "over" {
  playbook {
    source = "./child"
    inputs = { word = "over the cap" }
  }
}
output {
  once   = steps.once.output
  each   = { for k, it in steps.each.output.items : k => it.outputs.run.said }
  tokens = run.tokens
}
