// Package heldtest holds the ways an item of a for_each can ask a
// person, which interp's and interp/temporal's tests share (it imports
// nothing, so that interp's own tests may import it).
package heldtest

// A Case is a way an item of a for_each can ask a person: the
// for_each's body steps that do it for item "b" (Body), and the
// sub-playbook "child" they run, if any (Child). interp's and
// interp/temporal's tests check that no new item starts while the
// question waits, each on its engine.
type Case struct {
	Name, Body, Child string
}

const heldAsk = `
  ask {
    question = "Go on?"
    options  = ["yes", "no"]
  }`

const heldPhase = `
  step "phase" {
    when = "item == 'b'"
    playbook { source = "child" }
  }`

const heldChild = `
playbook "child" {}
step "decide" {` + heldAsk + `
}
`

// Cases are the ways an item asks: directly, in a sub-playbook, and
// in an item of a sub-playbook's own for_each.
var Cases = []Case{
	{"ask", `
  step "decide" {
    when = "item == 'b'"` + heldAsk + `
  }`, heldChild},
	{"sub-playbook", heldPhase, heldChild},
	{"for_each of a sub-playbook", heldPhase, `
playbook "child" {}
step "inner" {
  for_each = "['x', 'y']"
  step "decide" {
    when = "item == 'y'"` + heldAsk + `
  }
}
`},
}
