package agent

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// ErrTimeout is returned when an agent call outlives its timeout. The
// process group of a CLI agent has been killed by then.
var ErrTimeout = errors.New("agent call timed out")

// ErrRefused is returned when a backend reports that the model refused to
// answer.
var ErrRefused = errors.New("agent refused")

// Request is one agent call, fully rendered by the interpreter.
type Request struct {
	Step    string // the calling step's name (APL_STEP)
	Agent   string // the agent's type, e.g. "gsd-executor" (APL_AGENT)
	Model   string // model name; empty means the driver's default
	Prompt  string // the rendered prompt
	System  string // optional system prompt / appended system prompt
	Attempt int    // 1-based count of this step's calls in the run (APL_ATTEMPT)
	RunID   string // APL_RUN_ID
	ItemKey string // key of the for_each item, empty outside one (APL_ITEM_KEY)
	Workdir string // the project root; the process working directory (APL_WORKDIR)
	// Schema is a JSON Schema for the expected JSON answer, derived from the
	// step's `returns` type; nil when the step declares none.
	Schema map[string]any
	// SessionID asks the backend to continue an earlier session, if it can.
	SessionID string
	// Timeout bounds the call; zero means the driver's default.
	Timeout time.Duration
	// Started, when set, is told the process id of a CLI driver's process
	// as soon as it runs (see Process.Started); HTTP drivers never call it.
	Started func(pid int)
	// Progress, when set, is told what the driver learns while the call
	// runs (Progress). It may be called from other goroutines than Call's,
	// one call at a time, and never after Call returned; it must not block.
	Progress func(Progress)
	// RawFile, when set, is a file for the driver's raw output (a CLI's
	// stdout, an HTTP answer's body): a driver that can writes it there
	// as it arrives and reads its answer back from the file, so that an
	// answer of tens of megabytes is not also held in Response.Raw. Such
	// a driver sets Response.RawFile; one that cannot leaves it empty and
	// returns Raw as usual.
	RawFile string
}

// Usage is what a backend reports about tokens. Zero means not reported.
// InputTokens counts uncached input only, whatever the backend's own
// convention (OpenAI and codex count cache hits inside their input tokens;
// the drivers move them to CacheReadTokens), so that prices apply once.
type Usage struct {
	InputTokens      int `json:"input_tokens"`
	OutputTokens     int `json:"output_tokens"`
	CacheReadTokens  int `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
}

// Total is input plus output tokens.
func (u Usage) Total() int { return u.InputTokens + u.OutputTokens }

// Response is what a driver returns for one call.
type Response struct {
	// Text is the agent's answer as text.
	Text string `json:"text"`
	// Structured is the backend's native structured answer (e.g. claude-code's
	// structured_output), when it has one; it takes precedence over Text for
	// JSON extraction.
	Structured json.RawMessage `json:"structured,omitempty"`
	SessionID  string          `json:"session_id,omitempty"`
	// Model is the model that answered, when the backend says; "" when it
	// does not.
	Model string `json:"model,omitempty"`
	Usage Usage  `json:"usage"`
	// CostUSD is the cost reported by the backend or computed from a price
	// table; nil when unknown. Never invented.
	CostUSD *float64 `json:"cost_usd"`
	// Raw is the driver's raw output (stdout, HTTP body), kept as an artifact.
	Raw []byte `json:"-"`
	// RawFile is set, and Raw nil, when the driver wrote its raw output
	// to Request.RawFile instead; it is that path. The file is not
	// redacted: the caller redacts what it keeps.
	RawFile string `json:"-"`
	// RawIsText reports that the raw output is Text itself (a command
	// driver's text output), so that it need not be kept twice.
	RawIsText bool `json:"-"`
	// Stderr is what a CLI agent printed on stderr, kept as an artifact;
	// nil for HTTP drivers.
	Stderr []byte `json:"-"`
}

// Driver makes agent calls. Implementations must be safe for concurrent use.
//
// When a call fails after the backend answered, Call returns what it could
// read of the answer (Raw, Usage, CostUSD, SessionID) with the error, so
// the tokens a failed call spent are still counted.
type Driver interface {
	Call(ctx context.Context, req Request) (Response, error)
}
