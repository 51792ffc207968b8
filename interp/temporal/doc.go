// Package temporal runs playbooks on a Temporal cluster: apl run
// --engine temporal starts a run, apl worker serves it.
//
// The interpreter's walk is the workflow (runner.Run): interp.Start with
// an interp.Engine (runEngine) whose clock is workflow.Now, whose sleeps are
// workflow timers, whose coroutines run one at a time on one workflow
// coroutine (the hub, hub.go; on a workflow coroutine each in runs
// started before it) and whose channels are the hub's, so that given the
// same step results the walk takes the same path on every replay. Every
// action that reaches the world is an activity (activities): a shell
// step's command, an agent call (the worker makes the driver from the
// profile's configuration), a builtin call. An action's error is part
// of the activity's result, with its kind, so apl's own retry, checks and
// gates decide on it as they do locally; Temporal retries an activity
// only when its worker went silent (heartbeat timeout), which is how a
// run outlives a worker.
//
// A sub-playbook step is a child workflow (runEngine.SubRun): the same workflow with the sub-playbook's ref and the
// step's inputs, its ID the parent workflow's and the sub-run's id
// (STEP-ATTEMPT, STEP-ITEMKEY-ATTEMPT), so each phase of an orchestrator
// has a history of its own. Its result carries its metrics, which count
// toward the parent's caps as a local sub-run's do, and the decision it
// waits for. A cap of the parent's that it trips reaches the parent at
// once, by a signal (captrip.go), so the parent starts nothing after it. A playbook's documents are projected by the walk and, when
// one changed, written by a worker in its project directory (the Document
// and ArchiveDocument activities, through runEngine.WriteDocument), one
// write at a time in the walk's order.
//
// The workflow's input carries the playbook's sources as apl run loaded
// them, and every other file loading it reads (prompt files, upstreams,
// sub-playbooks: lang.Files, read back through lang.Loader.Files), so a
// run keeps the playbook it started with and a worker needs no copy of
// the project's playbooks. Results over
// inlineMax go to the blob store the workers share (a directory, files
// named by their SHA-256) and the history holds their names.
//
// The workflow keeps no state on disk: the history is the durable state.
// Its run directory is a temporary one on the worker, for artifacts.
//
// A client follows a run with queries, which the history does not keep
// (watch.go): QueryEvents returns the run's events from an index on (the
// workflow keeps the last eventsKept in memory, messages cut short, for
// apl run's progress lines) and the questions it waits on. An ask step's
// Asker (signalAsker) publishes its question (QueryWaiting) and waits,
// with the workflow alive, for SignalAnswer: SendAnswer checks the choice
// against the question's options, signals, and waits until the workflow
// has taken it. Answers given when the run starts (Options.Answers) are
// used first, as locally. A sub-run's ask waits in its child workflow; a
// client finds it among the run's pending children (subask.go) and sees
// it as STEP/SUBSTEP, as a local sub-run's waiting is reported, and
// SendAnswer signals the child. While a question waits, the for_each
// steps around it start no new item; a sub-run's question holds its
// parent's too, which it signals when the question opens and closes
// (SignalAskHold, subask.go).
//
// A replayed run (Replay, apl run --replay) carries the cassette's
// contents in its input, and the workflow answers agent calls from it
// itself: replaying reads nothing and its numbering is the walk's, which
// is deterministic. Recording is not offered: the workflow cannot write
// the client's file.
//
// A run keeps to the checkout of the worker that took it (home.go): its
// activities and its sub-runs' go to that worker's own task queue. A
// worker's commands do not outlive it (guard.go). Cancelling the workflow
// interrupts the run as Ctrl-C interrupts a local one (cancel.go).
//
// A run's directory (its artifacts) is a temporary one on the worker
// that walks it, which a client reads with QueryRunDir (rundir.go).
//
// A run's workflow continues as new when its history grows long
// (continue.go): the walk is interrupted once nothing is under way, and
// the next execution resumes the run from its state (interp.ResumeState),
// which goes through the blob store. The history grows by what a step
// does, not by what the run carries: a document's write after the first
// is a diff (document.go), and a child workflow's input holds its own
// playbook's files, not the run's.
//
// Not yet: a run directory on the client.
package temporal
