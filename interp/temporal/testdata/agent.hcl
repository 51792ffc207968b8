playbook "agent" {}
agent "a" {}
step "ask" {
  returns = object({ n = number, word = string })
  agent "a" { prompt = "give me a number" }
}
step "each" {
  for_each    = "['x', 'y']"
  key         = "item"
  concurrency = 2
  step "do" {
    agent "a" { prompt = "do ${item}" }
  }
}
step "route" {
  gate {
    rule "big" {
      when   = "steps.ask.output.n > 1"
      finish = "big"
    }
    otherwise {}
  }
}
output {
  n    = steps.ask.output.n
  word = steps.ask.output.word
}
