playbook "child" {}
input "word" {
  type = string
}
driver "counted" {
  type    = "command"
  command = ["sh", "-c", "cat >/dev/null; printf '{\"text\": \"ok\", \"usage\": {\"input_tokens\": 60}}'"]
  output  = "json"
}
agent "a" {
  driver = driver.counted
}
prompt "say" {
  template = file("prompts/say.md")
}
step "say" {
  agent "a" { prompt = prompt.say }
}
step "echo" {
  shell { command = ["echo", "${inputs.word}: ${steps.say.output}"] }
}
output {
  said = trimspace(steps.echo.output)
}
