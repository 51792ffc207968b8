// Package interp runs playbooks. It walks a lang.Playbook's step graph:
// it evaluates each step's `when`, performs its action through the
// builtins and agent drivers it is handed, routes on gates, enforces caps,
// and checkpoints the run's state after every transition so that a killed
// run can be resumed.
//
// interp never parses HCL: it evaluates the expressions lang kept, against
// the run's state. All mutable data lives in a run (see state.go), so one
// Playbook can back many runs at once. The walk is deterministic given the
// step results: routing never reads the wall clock, random numbers or map
// order, and every side effect happens inside a step.
//
// interp prints nothing. Progress reaches the caller as Events through an
// Observer; the caller decides how to show them.
package interp
