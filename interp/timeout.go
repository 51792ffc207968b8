package interp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/lang"
)

// TimeoutError is a step's action outliving its time limit. It says
// which limit, where it was set and how to change it, in place of the
// deadline errors of the layers below.
type TimeoutError struct {
	Step  string
	Limit time.Duration
	// Default is set when the limit is a shell command's default
	// (builtins.DefaultTimeout), not the step's timeout attribute.
	Default bool
	// Flag is the command-line flag that set the limit over the step's
	// own (--timeout STEP=D, --agent-timeout D), "" when none did.
	Flag string
	Err  error
}

func (e *TimeoutError) Error() string {
	if e.Flag != "" {
		return fmt.Sprintf("timed out after %s, the limit %s set; raise it to allow longer", e.Limit, e.Flag)
	}
	if e.Default {
		return fmt.Sprintf("timed out after %s, the default limit of a shell command; to allow longer, set a timeout in step %q, e.g. timeout = \"5m\"", e.Limit, e.Step)
	}
	return fmt.Sprintf("timed out after %s, the limit set by step %q's timeout attribute; raise it to allow longer", e.Limit, e.Step)
}

func (e *TimeoutError) Unwrap() error { return e.Err }

// timeoutError rewords err when the action ran out of time: its context's
// deadline, which the step's timeout set, passed (timedOut), or a command
// reached its own default limit.
func timeoutError(s *lang.Step, limit stepLimit, err error, timedOut bool) error {
	byLimit := limit.d > 0 && (timedOut || errors.Is(err, builtins.ErrTimeout) || errors.Is(err, agent.ErrTimeout) || errors.Is(err, context.DeadlineExceeded))
	switch {
	case err == nil:
		return nil
	case byLimit:
		return &TimeoutError{Step: s.Name, Limit: limit.d, Flag: limit.flag, Err: err}
	case errors.Is(err, builtins.ErrTimeout):
		if _, shell := s.Action.(*lang.Shell); shell {
			return &TimeoutError{Step: s.Name, Limit: builtins.DefaultTimeout, Default: true, Err: err}
		}
	}
	return err
}

// stepLimit is a step's time limit and the flag that set it, "" for the
// playbook's own.
type stepLimit struct {
	d    time.Duration
	flag string
}

// limit is step s's time limit: the run's --timeout for it, else its
// --agent-timeout for an agent step, else its timeout attribute (0 when
// it has none, and the action's own default applies).
func (r *run) limit(s *lang.Step) stepLimit {
	if d, ok := r.opts.Timeouts[s.Name]; ok {
		return stepLimit{d, fmt.Sprintf("--timeout %s=%s", s.Name, d)}
	}
	if _, ok := s.Action.(*lang.AgentCall); ok && r.opts.AgentTimeout > 0 {
		return stepLimit{r.opts.AgentTimeout, fmt.Sprintf("--agent-timeout %s", r.opts.AgentTimeout)}
	}
	return stepLimit{d: s.TimeoutIn(r.fixed)}
}

// recordTimeouts records the run's time-limit overrides in its state.
func (m *Meta) recordTimeouts(opts Options) {
	m.Timeouts = nil
	for step, d := range opts.Timeouts {
		if m.Timeouts == nil {
			m.Timeouts = map[string]string{}
		}
		m.Timeouts[step] = d.String()
	}
	m.AgentTimeout = ""
	if opts.AgentTimeout > 0 {
		m.AgentTimeout = opts.AgentTimeout.String()
	}
}

// keptTimeouts are the overrides of a resumed run: those it started with,
// under those the resume gives.
func (m *Meta) keptTimeouts(opts Options) (map[string]time.Duration, time.Duration, error) {
	steps := map[string]time.Duration{}
	for step, s := range m.Timeouts {
		d, err := time.ParseDuration(s)
		if err != nil {
			return nil, 0, fmt.Errorf("state: timeouts: %s: %w", step, err)
		}
		steps[step] = d
	}
	for step, d := range opts.Timeouts {
		steps[step] = d
	}
	agentLimit := opts.AgentTimeout
	if agentLimit == 0 && m.AgentTimeout != "" {
		d, err := time.ParseDuration(m.AgentTimeout)
		if err != nil {
			return nil, 0, fmt.Errorf("state: agent_timeout: %w", err)
		}
		agentLimit = d
	}
	return steps, agentLimit, nil
}
