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
	Err     error
}

func (e *TimeoutError) Error() string {
	if e.Default {
		return fmt.Sprintf("timed out after %s, the default limit of a shell command; to allow longer, set a timeout in step %q, e.g. timeout = \"5m\"", e.Limit, e.Step)
	}
	return fmt.Sprintf("timed out after %s, the limit set by step %q's timeout attribute; raise it to allow longer", e.Limit, e.Step)
}

func (e *TimeoutError) Unwrap() error { return e.Err }

// timeoutError rewords err when the action ran out of time: its context's
// deadline, which the step's timeout set, passed (timedOut), or a command
// reached its own default limit.
func timeoutError(s *lang.Step, limit time.Duration, err error, timedOut bool) error {
	stepLimit := limit > 0 && (timedOut || errors.Is(err, builtins.ErrTimeout) || errors.Is(err, agent.ErrTimeout) || errors.Is(err, context.DeadlineExceeded))
	switch {
	case err == nil:
		return nil
	case stepLimit:
		return &TimeoutError{Step: s.Name, Limit: limit, Err: err}
	case errors.Is(err, builtins.ErrTimeout):
		if _, shell := s.Action.(*lang.Shell); shell {
			return &TimeoutError{Step: s.Name, Limit: builtins.DefaultTimeout, Default: true, Err: err}
		}
	}
	return err
}
