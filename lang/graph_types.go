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
	Progress   string
	When       *Condition // nil: always runs
	SkipReason hcl.Expression
	// Returns is the declared type of the step's output; cty.NilType when
	// the step declares none.
	Returns         cty.Type
	Timeout         time.Duration
	ContinueOnError bool
	Action          Action // nil for a step that only routes
	Gate            *Gate
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
// *AgentCall and *Call. The interpreter dispatches on it with one type
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
	Prompt    *Prompt
	Template  hcl.Expression // the template to render
	Vars      hcl.Expression // object; may be nil
	Budget    *Budget        // the step's budget, else the agent's; may be nil
	Model     string
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
