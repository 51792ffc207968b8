// Checks which .hcl files the extension claims as playbooks
// (src/detect.ts): apl's playbooks, forks and test files, and not
// Terraform, Packer or Nomad files. Run: npm test (after npm install).
"use strict";
const assert = require("assert");
const fs = require("fs");
const path = require("path");
const ts = require("typescript");

// src/detect.ts, transpiled here (it imports nothing), so that the test
// needs no build first.
function load() {
  const src = fs.readFileSync(path.join(__dirname, "..", "src", "detect.ts"), "utf8");
  const js = ts.transpileModule(src, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2020 } }).outputText;
  const mod = { exports: {} };
  new Function("exports", "module", js)(mod.exports, mod);
  return mod.exports;
}
const { declaresPlaybook } = load();

const playbooks = {
  playbook: 'playbook "review" {\n  description = "x"\n}\n',
  "steps only": '# the pipeline\nstep "plan" {\n  shell {\n    command = ["true"]\n  }\n}\n',
  fork: 'extends = "stdlib:phase-runner"\n',
  "test file": 'mock "plan" {\n  output = {}\n}\n\ntest "happy" {\n  expect {\n    status = "completed"\n  }\n}\n',
  "on_failure file": "on_failure {\n  step \"notify\" {\n    shell {\n      command = [\"true\"]\n    }\n  }\n}\n",
};
const others = {
  terraform: 'terraform {\n  required_version = ">= 1.0"\n}\n\nresource "aws_s3_bucket" "b" {\n  bucket = "step"\n}\n',
  packer: 'source "docker" "ubuntu" {\n  image = "ubuntu"\n}\n\nbuild {\n  sources = ["source.docker.ubuntu"]\n}\n',
  nomad: 'job "web" {\n  group "g" {\n    task "step" {\n      driver = "docker"\n    }\n  }\n}\n',
  "indented step": 'job "x" {\n  step "y" {}\n}\n',
  "step in a comment": '# step "plan" { is how apl writes it\nvariable "x" {}\n',
};
for (const [name, text] of Object.entries(playbooks)) {
  assert.ok(declaresPlaybook(text), `${name} is a playbook file`);
}
for (const [name, text] of Object.entries(others)) {
  assert.ok(!declaresPlaybook(text), `${name} is not a playbook file`);
}
console.log("detect: ok");
