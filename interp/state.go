package interp

import (
	"encoding/json"
	"time"

	"github.com/apl-lang/apl/lang"
)

// Run statuses.
const (
	StatusRunning     = "running"
	StatusCompleted   = "completed"
	StatusFailed      = "failed"
	StatusInterrupted = "interrupted"
	// StatusWaiting is a run paused for a human decision; resume it with
	// answers.
	StatusWaiting = "waiting"
)

// Step statuses.
const (
	StepPending   = "pending"
	StepRunning   = "running"
	StepCompleted = "completed"
	StepFailed    = "failed"
	StepSkipped   = "skipped"
)

// stateVersion is the state file format; resume refuses other versions.
const stateVersion = 1

// State is everything a run knows, as written to its state file after
// every transition.
type State struct {
	Meta  Meta                   `json:"_meta"`
	Steps map[string]*StepRecord `json:"steps"`
	// Caps counts how often each capped goto was taken: "step/rule" → n.
	Caps map[string]int `json:"caps"`
	// Vars are the values gates assigned with `set`.
	Vars map[string]json.RawMessage `json:"vars"`
	// Items are the items of for_each steps: step → key → record.
	Items map[string]map[string]*ItemRecord `json:"items,omitempty"`
	// ItemsRun is the run of each for_each step (StepRecord.Runs) its
	// items belong to: a new run computes new items, a resumed one keeps
	// them.
	ItemsRun map[string]int `json:"items_run,omitempty"`
	Breaker  BreakerState   `json:"circuit_breaker"`
	// Waiting says which decision a waiting run needs.
	Waiting *Waiting `json:"waiting,omitempty"`
	Events  []Event  `json:"event_log"`
	Metrics Metrics  `json:"metrics"`
	// Output is the run's output object, once the run has ended.
	Output json.RawMessage `json:"output,omitempty"`
}

// Meta is the run's header.
type Meta struct {
	Version int `json:"version"`
	// Seq counts the state's writes; journal entries carry it.
	Seq          int    `json:"seq"`
	RunID        string `json:"run_id"`
	Playbook     string `json:"playbook"`
	PlaybookRef  string `json:"playbook_ref"`
	PlaybookHash string `json:"playbook_hash"`
	Mode         string `json:"mode,omitempty"`
	// AgentCommand is the command every agent step went to (apl run
	// --agent-cmd), so that resume can use it again.
	AgentCommand []string `json:"agent_command,omitempty"`
	// Timeouts and AgentTimeout are the time limits the command line set
	// over the playbook's (Options.Timeouts, Options.AgentTimeout), as
	// durations ("30m0s"), so that a resumed run keeps them.
	Timeouts     map[string]string `json:"timeouts,omitempty"`
	AgentTimeout string            `json:"agent_timeout,omitempty"`
	// Inputs are the run's input values, after defaults and mode.
	Inputs         map[string]json.RawMessage `json:"inputs"`
	Workdir        string                     `json:"workdir"`
	Status         string                     `json:"status"`
	Recommendation string                     `json:"recommendation,omitempty"`
	// ErrorKind is the error kind of what failed the run, "" otherwise; a
	// playbook step that ran this run as a sub-playbook fails with it.
	ErrorKind string `json:"error_kind,omitempty"`
	Reason    string `json:"reason,omitempty"`
	// CurrentStep is the step to run next (or running now); "" once the
	// main steps are done.
	CurrentStep    string    `json:"current_step"`
	StartedAt      time.Time `json:"started_at"`
	LastCheckpoint time.Time `json:"last_checkpoint"`
	// OnFailure is set once the run failed and its on_failure steps
	// began; OnFailureStep is the next of them to run.
	OnFailure     bool   `json:"on_failure,omitempty"`
	OnFailureStep string `json:"on_failure_step,omitempty"`
	// Finally is set once the run ended (after any on_failure steps) and
	// its finally steps began; FinallyStep is the next of them to run.
	Finally     bool   `json:"finally,omitempty"`
	FinallyStep string `json:"finally_step,omitempty"`
	// EventsArchived counts the oldest events moved out of the state into
	// the events archive (ReadEvents reads both).
	EventsArchived int `json:"events_archived,omitempty"`
	// Documents are where the playbook's documents go, by name, as their
	// path templates gave them when the run started: resume writes the
	// same files.
	Documents map[string]DocumentFile `json:"documents,omitempty"`
	// Settings are the values of the playbook's settings (caps,
	// concurrencies, limits and time limits written over inputs, by
	// lang.Setting.Name), fixed when the run started: a resumed run keeps
	// them, even with a changed playbook.
	Settings map[string]lang.Fixed `json:"settings,omitempty"`
	// TraceAttributes are the playbook's trace attributes, evaluated when
	// the run started: a JSON object added to every span.
	TraceAttributes json.RawMessage `json:"trace_attributes,omitempty"`
}

// DocumentFile names a playbook document's file and its backup (""
// when it keeps none), relative to the project directory.
type DocumentFile struct {
	Path   string `json:"path"`
	Backup string `json:"backup,omitempty"`
}

// StepRecord is what the run knows about one step.
type StepRecord struct {
	Status   string `json:"status"`
	Attempts int    `json:"attempts"`
	Calls    int    `json:"calls,omitempty"` // agent calls, re-prompts included
	// Runs counts the action's runs, retries and check re-runs included;
	// artifacts and sub-runs are named by it.
	Runs   int             `json:"runs,omitempty"`
	Output json.RawMessage `json:"output,omitempty"`
	// OutputFile holds the output instead of Output when it is large: the
	// path of an artifact in the run directory, so that the state (written
	// after every transition) stays small.
	OutputFile string `json:"output_file,omitempty"`
	// OutputText holds a large text output instead, when it is the
	// agent's answer as it came (RawFile, which it names): the output is
	// that artifact's whole content as a string, so that an answer of
	// tens of megabytes is written once, not again as JSON.
	OutputText string `json:"output_text,omitempty"`
	Error      string `json:"error,omitempty"`
	// ErrorKind classifies Error: one of agent.Kinds, "" without an
	// error.
	ErrorKind   string     `json:"error_kind,omitempty"`
	ExitCode    *int       `json:"exit_code,omitempty"`
	SkipReason  string     `json:"skip_reason,omitempty"`
	StartedAt   *time.Time `json:"started_at,omitempty"`
	CompletedAt *time.Time `json:"completed_at,omitempty"`
	DurationS   float64    `json:"duration_s"`
	Tokens      int        `json:"tokens,omitempty"`
	CostUSD     *float64   `json:"cost_usd,omitempty"`
	// SessionID is the agent session of the step's last call, written
	// when a call returns: re-prompts, retries and check re-runs continue
	// it, and so does resume when the attempt was cut off. A new attempt
	// (a gate going back to the step) starts a new session unless the
	// action's session names one; until its first call returns, the
	// record keeps the last attempt's.
	SessionID string `json:"session_id,omitempty"`
	// newSession is set while an attempt that does not continue
	// SessionID has made no call yet.
	newSession bool
	// Model is the model the last agent call used: as its driver reported
	// it, else as the step asked for it.
	Model string `json:"model,omitempty"`
	// Agent is the agent block the last agent call asked: the action's
	// own, or the fallback it fell back to.
	Agent string `json:"agent,omitempty"`
	// RawFile is the artifact holding the last agent answer's whole text
	// (steps.NAME.raw). The text itself stays out of the state, which is
	// rewritten after every transition; a run keeps it in memory.
	RawFile string `json:"raw_file,omitempty"`
}

// Waiting is a decision a paused run needs from a person.
type Waiting struct {
	Step     string   `json:"step"`
	Item     string   `json:"item,omitempty"`
	Question string   `json:"question"`
	Options  []string `json:"options"`
	// Text says the question takes a typed answer, not one of Options.
	Text bool `json:"text,omitempty"`
	// Default is the answer an empty one at a terminal takes; "" for
	// none.
	Default string `json:"default,omitempty"`
}

// Metrics aggregate the run.
type Metrics struct {
	TotalTokens  int      `json:"total_tokens_used"`
	TotalCostUSD *float64 `json:"total_cost_usd"`
	StepsRun     int      `json:"steps_run"`
	StepsFailed  int      `json:"steps_failed"`
	AgentCalls   int      `json:"agent_calls"`
	Retries      int      `json:"retries"`
	DurationS    float64  `json:"total_duration_s"`
}

const (
	stateFile  = "state.json"
	backupFile = "state.json.bak"
)
