package interp

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/lang"
	"github.com/zclconf/go-cty/cty"
)

// kindError is an error the interpreter classified itself, where the
// layers below had nothing to classify (a shell step's exit status, an
// empty answer).
type kindError struct {
	kind string
	err  error
}

func (e *kindError) Error() string { return e.err.Error() }
func (e *kindError) Unwrap() error { return e.err }

func withKind(kind string, err error) error { return &kindError{kind, err} }

// errorKind classifies a step's error into one of agent.Kinds
// (steps.NAME.error_kind): the interpreter's own errors first, then what
// the builtins and the agent drivers say.
func errorKind(err error) string {
	var ke *kindError
	var te *TimeoutError
	var pe *builtins.PolicyError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &te), errors.Is(err, builtins.ErrTimeout):
		return agent.KindTimeout
	case errors.Is(err, ErrInterrupted), errors.Is(err, context.Canceled):
		return agent.KindInterrupted
	case errors.As(err, &pe):
		return agent.KindRefused
	case errors.As(err, &ke):
		return ke.kind
	}
	return agent.Kind(err)
}

// keepRaw keeps an agent answer's whole text for steps.NAME.raw: in
// memory, and on disk for a resumed run. The response artifact holds it
// already unless the driver's raw output (an envelope, an HTTP body) is
// what that artifact holds (or the driver streamed it there, and it is
// not the text).
func (r *run) keepRaw(s *lang.Step, rec *StepRecord, base string, resp agent.Response, artifact string) {
	r.raws[rec] = r.redact.String(resp.Text)
	if resp.Raw == nil && (resp.RawFile == "" || resp.RawIsText) {
		rec.RawFile = artifact
		return
	}
	rec.RawFile = r.artifactText(s, base+".text", resp.Text)
}

// rawValue is steps.NAME.raw: the last answer's text, null before a step
// has one (and for steps that are not agent calls).
func (r *run) rawValue(rec *StepRecord) cty.Value {
	if text, ok := r.raws[rec]; ok {
		return textVal(text)
	}
	if rec.RawFile == "" || r.dir == nil {
		return cty.NullVal(cty.String)
	}
	b, err := os.ReadFile(filepath.Join(r.dir.path, filepath.Clean("/" + rec.RawFile)[1:]))
	if err != nil {
		return cty.NullVal(cty.String)
	}
	r.raws[rec] = string(b)
	return textVal(string(b))
}
