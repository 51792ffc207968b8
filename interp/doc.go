// Package interp runs playbooks. It walks a lang.Playbook's step graph:
// it evaluates each step's `when`, performs its action through the
// builtins and agent drivers it is handed, routes on gates, enforces caps,
// and checkpoints the run's state after every transition so that a killed
// run can be resumed.
//
// interp never parses HCL: it evaluates the expressions lang kept, against
// the run's state. All mutable data lives in a run (see state.go), so one
// Playbook can back many runs at once. interp prints nothing. Progress
// reaches the caller as Events through an Observer; failures are typed
// errors the caller puts into words.
//
// # The walk
//
// A run is walked as frames. The run's own frame walks the main steps,
// then, if the run failed, the on_failure steps, then, however it ended,
// the finally steps; each item of a for_each step walks a frame of its
// own over the step's body:
//
//	           ┌──────────────────── walkFrame ──────────────────┐
//	           │  s := the step the frame stands at              │
//	outcome ◄──┤  o := step(s)        (when, attempts, action,   │
//	applied    │                       checks, breaker, gate)    │
//	to the     │  next: go on | finish, fail, trip: end the frame│
//	frame      │  wait, interrupt, abort, requeue: stop the walk │
//	           └──────────────┬──────────────────────────────────┘
//	                          │ a for_each step's action
//	           ┌──────────────▼─────── scheduler ────────────────┐
//	           │ start ready items within concurrency and limits │
//	           │ spawn walkItem(item) ──► item frame, own records│
//	           │ ◄── itemDone{item, outcome}                     │
//	           │ settle: item status, release or block dependents│
//	           │         stop the run on a trip (close stop)     │
//	           └─────────────────────────────────────────────────┘
//
// One loop, walkFrame, walks every frame; a frameWalk says what differs
// between the main steps (walkMain), an ending section (walkEnding) and
// an item (walkItem): where the frame stands, and what an outcome that
// ends it means. step returns an outcome (outcome.go), a closed set: go
// on to a step, finish with a status of the playbook's own, fail, trip a
// run-wide cap or the circuit breaker, wait for a person, be interrupted,
// abort because apl cannot go on, or requeue an item. It is the one
// result shape: an action and a gate return one too (an output, a
// failure not yet located, a trip), and the step turns theirs into its
// own. A step writes only its own record; the frame's loop is the one
// place that applies an outcome to the run's status (Meta), and for an
// item the scheduler is the one place that applies the item's final
// outcome: its status, the items it releases or blocks, and whether the
// run stops. Whether the run decided to end (a cap crossed, the breaker
// open) is one predicate, stopped, which every item checks before each
// step and the scheduler before it starts one.
//
// # The host
//
// Everything the walk needs from outside the playbook goes through the
// host (host.go): the clock, sleeping, time limits, coroutines (spawn a
// walk, block while waiting on the world), the heartbeat of a long agent
// call, checkpoints and the observer.
// The walk is a set of coroutines of which one runs at a time; they take
// turns only inside host calls, so the walk's data needs no locks and,
// given the same step results and the same turn order, the walk takes the
// same path. localHost is the process's clock, goroutines and a baton
// mutex, and the run's store; a test runs the walk on a fake clock
// (host_test.go), and a durable-execution engine runs it as a workflow:
// Options.Engine (an Engine: clock, timers, coroutines and channels, and
// every way to the world: the actions, documents and sub-runs) replaces
// the local host's time and scheduling and sends the actions to the
// engine's workers (interp/temporal). The engine supplies all of them or
// the run does not start: none falls back to a local one. The walk's coroutines hand each other values only
// through the host's channels, never Go's, so an engine can schedule
// them.
//
// # What expressions see
//
// inputs, steps, run, vars, item and the playbook's locals are derived
// from the run's records when an expression is evaluated, for the steps
// and locals it reads (eval.go), with one derivation for both languages
// and no caches to keep in step. The one exception is a step's own
// locals: evaluated once when the step starts, they are kept in its
// frame for the attempt, and not in the state (a resumed step starts
// again and evaluates them again).
package interp
