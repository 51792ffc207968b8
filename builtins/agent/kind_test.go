package agent

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"testing"
)

func TestKind(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{fmt.Errorf("driver command: %w after 1s", ErrTimeout), KindTimeout},
		{context.DeadlineExceeded, KindTimeout},
		{context.Canceled, KindInterrupted},
		{&StatusError{429, errors.New("HTTP 429")}, KindRateLimited},
		{&StatusError{529, errors.New("overloaded")}, KindUnavailable},
		{&StatusError{404, errors.New("no such model")}, KindUnavailable},
		{&StatusError{400, errors.New("bad request")}, KindOther},
		{&unavailableError{errors.New("connection refused after 3 attempts")}, KindUnavailable},
		{fmt.Errorf("driver command: %w", exec.ErrNotFound), KindUnavailable},
		{&ExitError{2, errors.New("exited with status 2")}, KindExitStatus},
		{fmt.Errorf("the answer does not match: %w", ErrNoJSON), KindNoJSON},
		{fmt.Errorf("the answer does not match: %w", &ReturnsError{}), KindSchema},
		{&BudgetError{errors.New("too long")}, KindBudget},
		{fmt.Errorf("driver openai: %w: no", ErrRefused), KindRefused},
		{errors.New("what"), KindOther},
	} {
		if got := Kind(tc.err); got != tc.want {
			t.Errorf("Kind(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

// TestHTTPStatusKinds checks that the HTTP drivers' status failures
// classify by status.
func TestHTTPStatusKinds(t *testing.T) {
	err := claudeFailure(claudeResult{APIErrorStatus: ptr(429)}, 1)
	if Kind(err) != KindRateLimited {
		t.Errorf("claude 429: %q", Kind(err))
	}
	if err := claudeFailure(claudeResult{Result: "boom"}, 2); Kind(err) != KindExitStatus {
		t.Errorf("claude exit 2: %q", Kind(err))
	}
}

// TestHTTPDriverKinds checks the kinds of the HTTP drivers' failures and
// that they report the model that answered.
func TestHTTPDriverKinds(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", testKey)
	call := func(rep reply) (Response, error) {
		srv := newFakeServer(t, rep)
		d := newDriver(t, Config{Type: TypeOpenAI, BaseURL: srv.URL, Model: "m1",
			Retry: Retry{Max: 1, Sleep: (&sleeps{}).sleep}})
		return d.Call(context.Background(), Request{Prompt: "p"})
	}
	for _, tc := range []struct {
		status int
		want   string
	}{
		{429, KindRateLimited},
		{503, KindUnavailable},
		{404, KindUnavailable},
		{401, KindOther},
	} {
		_, err := call(reply{status: tc.status, body: `{"error":{"message":"no"}}`})
		if got := Kind(err); got != tc.want {
			t.Errorf("HTTP %d: Kind(%v) = %q, want %q", tc.status, err, got, tc.want)
		}
	}
	resp, err := call(reply{status: 200, body: openaiOK})
	if err != nil || resp.Model != "gpt-4o-mini" {
		t.Errorf("model %q, %v", resp.Model, err)
	}
}
