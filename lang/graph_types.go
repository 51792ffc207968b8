package lang

import (
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Step is a node of the step graph.
type Step struct {
	Name        string
	Index       int // position in declared order
	Description string
	// Progress is the step's progress label ("PLAN"); steps with one are
	// announced as "Step: PLAN (N/M)".
	Progress string
	// ProgressIndex is the step's place among the main steps with a
	// progress label (the N of N/M), 0 for others.
	ProgressIndex int
	When          *Condition // nil: always runs
	SkipReason    hcl.Expression
	// Returns is the declared type of the step's output; cty.NilType when
	// the step declares none.
	Returns         cty.Type
	Timeout         time.Duration
	ContinueOnError bool
	Action          Action // nil for a step that only routes
	Gate            *Gate
	// Retry re-runs the action when it fails; Checks reject an output and
	// may re-run the step.
	Retry  *Retry
	Checks []*Check
	// MaxTokens and MaxCostUSD cap what the step's agent calls may spend
	// (zero: no cap).
	MaxTokens  int
	MaxCostUSD float64
	// ProgressWhen tells whether the step made progress, for the circuit
	// breaker's no-progress count; nil means a completed step did.
	ProgressWhen *Condition
	// ForEach makes the step run its nested steps once per item.
	ForEach *ForEach
	// Parent is the for_each step whose body holds this step.
	Parent *Step
	// Serial lets one item at a time run this step (a review queue).
	Serial bool
	// Next is where control goes after the step when no gate rule routes
	// elsewhere; nil means the run ends after this step.
	Next *Step
	// Edges are all the ways control can leave the step, for checking and
	// drawing.
	Edges     []*Edge
	OnFailure bool // the step belongs to the on_failure section
	DeclRange hcl.Range
}

// Range returns where the step is declared.
func (s *Step) Range() hcl.Range { return s.DeclRange }

// String renders the step as golden tests see it.
func (s *Step) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "step %s", s.Name)
	if s.Action != nil {
		fmt.Fprintf(&b, " [%s]", s.Action)
	}
	if s.Progress != "" {
		fmt.Fprintf(&b, " progress=%s", s.Progress)
	}
	if s.When != nil {
		fmt.Fprintf(&b, " when=%q", s.When.Source)
	}
	if s.Returns != cty.NilType {
		fmt.Fprintf(&b, " returns=%s", typeString(s.Returns))
	}
	if s.Timeout > 0 {
		fmt.Fprintf(&b, " timeout=%s", s.Timeout)
	}
	return b.String()
}

// Action is what a step does. The set of actions is closed: *Shell,
// *AgentCall, *Call, *Ask and *SubPlaybook. The interpreter dispatches on it with one type
// switch.
type Action interface {
	Range() hcl.Range
	String() string
	action()
}

// Shell runs a command: Command as argv without a shell, or Script with
// bash. Values interpolated into Script are shell-quoted at run time.
type Shell struct {
	Command   hcl.Expression // list of strings; nil when Script is set
	Script    hcl.Expression // template; nil when Command is set
	Parse     string         // "text", "lines" or "json"
	Dir       hcl.Expression
	Env       hcl.Expression
	Stdin     hcl.Expression
	DeclRange hcl.Range
}

func (*Shell) action()            {}
func (a *Shell) Range() hcl.Range { return a.DeclRange }
func (a *Shell) String() string {
	kind := "command"
	if a.Script != nil {
		kind = "script"
	}
	return "shell " + kind + " parse=" + a.Parse
}

// AgentCall asks an agent: the prompt (a prompt block or an inline
// template) is rendered with Vars and sent through the agent's driver.
type AgentCall struct {
	Agent *Agent
	// Prompt is the prompt block used, or nil for an inline template.
	Prompt   *Prompt
	Template hcl.Expression // the template to render
	Vars     hcl.Expression // object; may be nil
	Budget   *Budget        // the step's budget, else the agent's; may be nil
	Model    string
	// Session, when set, names the agent session the call continues
	// (steps.X.session_id); evaluated at call time, a string. Nil: each
	// attempt starts a new session.
	Session   hcl.Expression
	DeclRange hcl.Range
}

func (*AgentCall) action()            {}
func (a *AgentCall) Range() hcl.Range { return a.DeclRange }
func (a *AgentCall) String() string {
	s := "agent " + a.Agent.Name
	if a.Prompt != nil {
		s += " prompt=" + a.Prompt.Name
	}
	if a.Budget != nil {
		s += " budget=" + a.Budget.Name
	}
	return s
}

// Call invokes a named builtin ("file.sha256", "git.revert", ...) with the
// block's attributes as arguments.
type Call struct {
	Builtin   string
	Args      []*NamedExpr
	DeclRange hcl.Range
}

func (*Call) action()            {}
func (a *Call) Range() hcl.Range { return a.DeclRange }
func (a *Call) String() string   { return "call " + a.Builtin }

// Gate is an ordered decision tree: the first rule whose condition holds
// decides; Otherwise decides when none does.
type Gate struct {
	Rules     []*Rule
	Otherwise *Rule // nil when the gate has none
	DeclRange hcl.Range
}

// Rule is one branch of a gate.
type Rule struct {
	Name      string // "otherwise" for the otherwise block
	When      *Condition
	Outcome   *Outcome
	DeclRange hcl.Range
}

// Outcome is what a gate rule does once chosen. Goto, Finish and Fail are
// exclusive; with none of them control goes to the step's Next.
type Outcome struct {
	Log    hcl.Expression // a line to log; may be nil
	Event  string         // an event to record, with Log as its message
	Set    hcl.Expression // an object whose attributes are assigned to vars
	Goto   *Step
	Max    int            // cap on taking Goto in one run; 0 = no cap
	Finish hcl.Expression // finish the run with this status
	Fail   hcl.Expression // fail the run with this recommendation
	Reason hcl.Expression // why, for Finish and Fail
	// Exhausted runs instead of this outcome once Goto was taken Max times.
	Exhausted *Outcome
	DeclRange hcl.Range
}

// EdgeKind says why control can move along an edge.
type EdgeKind int

const (
	EdgeNext      EdgeKind = iota // declared order or `next`
	EdgeGoto                      // a gate rule's goto
	EdgeExhausted                 // an on_exhausted block's goto
)

// Edge is a possible transition in the step graph.
type Edge struct {
	From, To *Step
	Kind     EdgeKind
	Rule     *Rule // for goto edges
	Max      int   // the cap on this edge; 0 = none
	Range    hcl.Range
}

// Label describes the edge for graphs: its condition and cap.
func (e *Edge) Label() string {
	var parts []string
	if e.Rule != nil {
		if e.Rule.When != nil {
			parts = append(parts, e.Rule.When.Source)
		} else {
			parts = append(parts, "otherwise")
		}
	}
	if e.Kind == EdgeExhausted {
		parts = append(parts, "exhausted")
	}
	if e.Max > 0 {
		parts = append(parts, fmt.Sprintf("max %d", e.Max))
	}
	return strings.Join(parts, ", ")
}

func (e *Edge) String() string {
	kind := map[EdgeKind]string{EdgeNext: "next", EdgeGoto: "goto", EdgeExhausted: "exhausted"}[e.Kind]
	s := fmt.Sprintf("-> %s (%s", e.To.Name, kind)
	if e.Rule != nil {
		s += " rule=" + e.Rule.Name
	}
	if e.Max > 0 {
		s += fmt.Sprintf(" max=%d", e.Max)
	}
	return s + ")"
}

// Ask asks a person to choose one of Options.
type Ask struct {
	Question  hcl.Expression
	Options   hcl.Expression // list of strings
	Default   hcl.Expression // may be nil
	DeclRange hcl.Range
}

func (*Ask) action()            {}
func (a *Ask) Range() hcl.Range { return a.DeclRange }
func (a *Ask) String() string   { return "ask" }

// SubPlaybook runs another playbook as a step; its output object is the
// step's output.
type SubPlaybook struct {
	Source    string
	Playbook  *Playbook // loaded with the parent
	Inputs    hcl.Expression
	Mode      string
	DeclRange hcl.Range
}

func (*SubPlaybook) action()            {}
func (a *SubPlaybook) Range() hcl.Range { return a.DeclRange }
func (a *SubPlaybook) String() string   { return "playbook " + a.Source }

// Retry re-runs a step's action after an error, waiting Backoff, doubled
// each time.
type Retry struct {
	Max     int
	Backoff time.Duration
}

// Check is a condition a step's output must meet.
type Check struct {
	Name      string
	Condition *Condition
	Message   hcl.Expression
	// OnFail is "retry" (run the step again, at most Max times) or "fail".
	OnFail    string
	Max       int
	DeclRange hcl.Range
}

// ForEach runs a body of steps once per item of a list computed at run
// time, as a task graph: items wait for the items they depend on, and at
// most Concurrency run at once, within each Limit.
type ForEach struct {
	List        *Condition // expr yielding a list
	Key         *Condition // expr over item yielding its key; nil: the index
	DependsOn   *Condition // expr over item yielding keys it waits for
	Priority    *Condition // expr over item; lower runs first
	Concurrency int
	Limits      []*Limit
	Steps       []*Step
	// ItemType is the declared type of an item, when the list's type is
	// known; cty.DynamicPseudoType otherwise.
	ItemType cty.Type
}

// Limit caps how many items with the same key run at once.
type Limit struct {
	Name    string
	Key     *Condition
	Max     map[string]int
	Default int // for keys not in Max; 0: no cap
}

// Limits are the run's caps (seed 001, section 2).
type Limits struct {
	Timeout    time.Duration
	MaxRetries int
	MaxTokens  int
	MaxCostUSD float64
	DeclRange  hcl.Range
}

// CircuitBreaker opens after NoProgress consecutive steps without progress
// or SameError consecutive identical errors; after Cooldown a resumed run
// tries one step (half-open).
type CircuitBreaker struct {
	NoProgress int
	SameError  int
	Cooldown   time.Duration
	DeclRange  hcl.Range
}
