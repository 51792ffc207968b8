// Which .hcl files are playbooks. HCL is the syntax of other tools too
// (Terraform, Packer, Nomad, Terragrunt), so the extension does not claim
// every .hcl file: only those whose text declares a top-level block or
// attribute that is apl's own, and those the user names with globs
// (the apl.playbooks setting).

// playbookMarker matches, at the start of a line, a top-level item only
// apl writes: a playbook, a step or a section of steps, a test file's
// test, mock or unreachable block, or the extends of a fork.
const playbookMarker =
  /^(?:(?:playbook|step|test|mock|unreachable)\s+"[^"\n]*"\s*\{|(?:on_failure|finally)\s*\{|extends\s*=)/m;

// declaresPlaybook reports whether text, an HCL file, is a playbook file
// or a playbook's test file.
export function declaresPlaybook(text: string): boolean {
  return playbookMarker.test(text);
}
