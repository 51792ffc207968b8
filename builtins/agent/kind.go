package agent

import (
	"context"
	"errors"
	"net/http"
	"os/exec"
	"syscall"
)

// The kinds of failure a playbook can route on (steps.NAME.error_kind). The
// set is closed: every error is one of them, KindOther when nothing more
// precise is known.
const (
	KindTimeout     = "timeout"           // the call or command outlived its time limit
	KindExitStatus  = "exit_status"       // a command or CLI agent exited non-zero
	KindNoJSON      = "no_json"           // the answer held no JSON
	KindSchema      = "schema"            // the answer's JSON did not match returns
	KindRateLimited = "rate_limited"      // the backend said too many requests (HTTP 429)
	KindUnavailable = "unavailable"       // the backend or model could not be reached or does not exist
	KindRefused     = "refused_by_policy" // the sandbox policy refused a command, or the model refused to answer
	KindBudget      = "budget"            // a budget or a run-wide cap stopped the step
	KindInterrupted = "interrupted"       // the run was cancelled
	KindOther       = "other"
)

// Kinds lists the error kinds, in the order the language reference does.
var Kinds = []string{KindTimeout, KindExitStatus, KindNoJSON, KindSchema, KindRateLimited,
	KindUnavailable, KindRefused, KindBudget, KindInterrupted, KindOther}

// KindError is an error whose kind is known where it is made, as when a
// test's mock fails a step with a given kind. Kind returns its Kind.
type KindError struct {
	Kind string
	Err  error
}

func (e *KindError) Error() string { return e.Err.Error() }
func (e *KindError) Unwrap() error { return e.Err }

// StatusError is a backend's answer with an HTTP error status, whether the
// driver spoke HTTP itself or a CLI agent reported the status of its API
// call. Kind reads the status; Error is the driver's message.
type StatusError struct {
	Status int
	Err    error
}

func (e *StatusError) Error() string { return e.Err.Error() }
func (e *StatusError) Unwrap() error { return e.Err }

// ExitError is a CLI agent exiting with a non-zero status and no more
// precise reason.
type ExitError struct {
	Status int
	Err    error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// BudgetError is an answer that a budget block could not cut down to what
// it allows.
type BudgetError struct{ Err error }

func (e *BudgetError) Error() string { return e.Err.Error() }
func (e *BudgetError) Unwrap() error { return e.Err }

// unavailableError is a backend that could not be reached at all.
type unavailableError struct{ Err error }

func (e *unavailableError) Error() string { return e.Err.Error() }
func (e *unavailableError) Unwrap() error { return e.Err }

// Kind classifies an agent call's error into one of Kinds; "" for nil.
func Kind(err error) string {
	var status *StatusError
	var exit *ExitError
	var budget *BudgetError
	var returns *ReturnsError
	var unavailable *unavailableError
	var known *KindError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &known):
		return known.Kind
	case errors.Is(err, ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return KindTimeout
	case errors.Is(err, context.Canceled):
		return KindInterrupted
	case errors.As(err, &budget):
		return KindBudget
	case errors.Is(err, ErrRefused):
		return KindRefused
	case errors.As(err, &status):
		return statusKind(status.Status)
	case errors.As(err, &unavailable), errors.Is(err, exec.ErrNotFound), errors.Is(err, syscall.ENOENT),
		errors.Is(err, syscall.ECONNREFUSED):
		return KindUnavailable
	case errors.Is(err, ErrNoJSON):
		return KindNoJSON
	case errors.As(err, &returns):
		return KindSchema
	case errors.As(err, &exit):
		return KindExitStatus
	}
	return KindOther
}

// statusKind classifies an HTTP error status: 429 is rate limiting; a
// model or endpoint that is not there (404), and the server's own
// failures and overload (5xx, Anthropic's 529), are unavailability.
func statusKind(code int) string {
	switch {
	case code == http.StatusTooManyRequests:
		return KindRateLimited
	case code == http.StatusNotFound, code >= 500:
		return KindUnavailable
	}
	return KindOther
}
