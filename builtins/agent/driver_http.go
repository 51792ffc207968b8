package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/apl-lang/apl/builtins"
)

// maxBody caps what is read of an HTTP answer.
const maxBody = 32 << 20

// rawResponse is a Response holding the raw body read: in rawFile when
// the body was written there, else in Raw.
func rawResponse(raw []byte, rawFile string) Response {
	if rawFile != "" {
		return Response{RawFile: rawFile}
	}
	return Response{Raw: raw}
}

// httpDriver is what the openai and anthropic drivers share: one endpoint,
// a key read from the environment at each call, and retries.
type httpDriver struct {
	kind     string
	endpoint string
	keyEnv   string
	client   *http.Client
	retry    Retry
	cfg      Config
}

func newHTTP(cfg Config, endpoint, keyEnv string) (*httpDriver, error) {
	if len(cfg.Command) > 0 || cfg.Input != "" || cfg.Output != "" || len(cfg.Fields) > 0 {
		return nil, fmt.Errorf("driver %s: command, input, output and fields are for the CLI drivers", cfg.Type)
	}
	if err := checkOptions(cfg); err != nil {
		return nil, err
	}
	if cfg.APIKeyEnv != "" {
		keyEnv = cfg.APIKeyEnv
	}
	client := cfg.Client
	if client == nil {
		client = &http.Client{} // the call's context carries the timeout
	}
	r := cfg.Retry
	if r.Max == 0 {
		r.Max = 3
	}
	if r.Backoff == 0 {
		r.Backoff = time.Second
	}
	if r.Sleep == nil {
		r.Sleep = sleep
	}
	return &httpDriver{kind: cfg.Type, endpoint: endpoint, keyEnv: keyEnv, client: client, retry: r, cfg: cfg}, nil
}

// key returns the API key from the environment; "" when unset.
func (h *httpDriver) key() string { return os.Getenv(h.keyEnv) }

// post sends body to the endpoint with headers, retrying 429 and 5xx answers
// and refused, reset or cut-off connections up to Retry.Max attempts, and
// returns the body of the first 2xx answer.
// Errors carry the status and the start of the answer, never the key; the
// returned body is the last one read, for the caller's artifact.
// Each retry is reported to req's Progress before its wait.
// With req.RawFile set, each answer's body is also written there as it is
// read, and rawFile names it once written.
func (h *httpDriver) post(ctx context.Context, req Request, headers map[string]string, body []byte) (last []byte, rawFile string, err error) {
	last, err = h.attempts(ctx, req, headers, body, &rawFile)
	return last, rawFile, err
}

// answerBody reads an answer's body, with the key redacted; with
// req.RawFile set it writes the body there as it reads and sets
// *rawFile.
func (h *httpDriver) answerBody(req Request, r io.Reader, rawFile *string) ([]byte, error) {
	r = io.LimitReader(r, maxBody)
	var sink *rawSink
	if req.RawFile != "" {
		var err error
		if sink, err = openRaw(req.RawFile); err == nil {
			r = io.TeeReader(r, sink.f)
		}
	}
	b, err := io.ReadAll(r)
	k := h.key()
	redact := k != "" && bytes.Contains(b, []byte(k))
	if redact {
		// A server that echoes the key must not put it in artifacts.
		b = bytes.ReplaceAll(b, []byte(k), []byte("[REDACTED]"))
	}
	if sink != nil {
		werr := error(nil)
		if redact {
			if werr = sink.f.Truncate(0); werr == nil {
				_, werr = sink.f.WriteAt(b, 0)
			}
		}
		if cerr := sink.f.Close(); werr == nil {
			werr = cerr
		}
		*rawFile = ""
		if werr == nil {
			*rawFile = sink.path
		}
	}
	return b, err
}

func (h *httpDriver) attempts(ctx context.Context, req Request, headers map[string]string, body []byte, rawFile *string) ([]byte, error) {
	secrets := redactor(nil, h.keyEnv)
	var last []byte
	for attempt := 1; ; attempt++ {
		hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, h.endpoint, bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("driver %s: %w", h.kind, err)
		}
		hreq.Header.Set("Content-Type", "application/json")
		for k, v := range headers {
			hreq.Header.Set(k, v)
		}
		resp, err := h.client.Do(hreq)
		if err == nil {
			last, err = h.answerBody(req, resp.Body, rawFile)
			resp.Body.Close()
		}
		if err != nil {
			// A refused or reset connection, or one that died mid-answer,
			// is as passing as a 5xx: retry it the same way, bounded.
			if ctx.Err() != nil || !transient(err) {
				return last, h.transportError(ctx, err, secrets)
			}
			if attempt >= h.retry.Max {
				return last, &unavailableError{fmt.Errorf("driver %s: %s after %d attempts: %s", h.kind, transientCause(err), attempt,
					secrets.String(err.Error()))}
			}
			if err := h.wait(ctx, req, attempt, 0, "", transientCause(err)); err != nil {
				return last, h.transportError(ctx, err, secrets)
			}
			continue
		}
		if resp.StatusCode >= 200 && resp.StatusCode < 300 {
			return last, nil
		}
		retryable := resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500
		if !retryable || attempt >= h.retry.Max {
			tries := ""
			if retryable {
				tries = fmt.Sprintf(" after %d attempts", attempt)
			}
			return last, &StatusError{resp.StatusCode, fmt.Errorf("driver %s: HTTP %d%s: %s", h.kind, resp.StatusCode, tries,
				secrets.String(apiMessage(last)))}
		}
		if err := h.wait(ctx, req, attempt, resp.StatusCode, resp.Header.Get("Retry-After"), secrets.String(apiMessage(last))); err != nil {
			if errors.Is(err, errWaitTooLong) {
				// Waiting would only end in a timeout; say what happened.
				return last, &StatusError{resp.StatusCode, fmt.Errorf("driver %s: HTTP %d, and %s: %s",
					h.kind, resp.StatusCode, err, secrets.String(apiMessage(last)))}
			}
			return last, h.transportError(ctx, err, secrets)
		}
	}
}

// errWaitTooLong is wrapped by wait's answer when the backoff would
// outlast the call.
var errWaitTooLong = errors.New("outlasts the call's timeout")

// wait sleeps before attempt+1: Retry.Backoff doubled per attempt, or what
// a Retry-After header says. It fails at once, wrapping errWaitTooLong,
// when the call's deadline comes first. It reports the retry, caused by
// status (0: a transport error) and why, to req's Progress.
func (h *httpDriver) wait(ctx context.Context, req Request, attempt, status int, retryAfterHeader, why string) error {
	wait := h.retry.Backoff << (attempt - 1)
	if ra, ok := retryAfter(retryAfterHeader, time.Now()); ok {
		wait = ra
	}
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
		return fmt.Errorf("the retry wait of %s %w", wait, errWaitTooLong)
	}
	req.progress(Progress{Kind: ProgressRetrying, Attempt: attempt, Max: h.retry.Max - 1, Status: status, Wait: wait, Message: excerpt(why, 200)})
	return h.retry.Sleep(ctx, wait)
}

// apiMessage returns the message of an API error body, in the shapes
// OpenAI, Anthropic and Gemini use ({"error": {"message": …}}, {"error":
// "…"}, {"message": …}), else the start of the body.
func apiMessage(body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(body, &v) == nil {
		var inner struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(v.Error, &inner) == nil && inner.Message != "":
			return excerpt(inner.Message, 300)
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			return excerpt(s, 300)
		case v.Message != "":
			return excerpt(v.Message, 300)
		}
	}
	return excerpt(string(body), 300)
}

// transient reports whether a transport error is worth another attempt:
// a refused or reset connection, or an answer cut off.
func transient(err error) bool {
	return transientCause(err) != ""
}

// transientCause names a transient transport error in a few words, or
// returns "" for any other error.
func transientCause(err error) string {
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "connection reset"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "connection closed mid-answer"
	}
	return ""
}

// transportError words a failure to talk to the server, telling a timeout
// apart from other failures.
func (h *httpDriver) transportError(ctx context.Context, err error, secrets *builtins.Redactor) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("driver %s: %w", h.kind, ErrTimeout)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("driver %s: %w", h.kind, ctx.Err())
	}
	return &unavailableError{fmt.Errorf("driver %s: %s", h.kind, secrets.String(err.Error()))}
}

// withTimeout bounds a call, all its attempts included.
func (h *httpDriver) withTimeout(ctx context.Context, req Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, timeout(req, h.cfg.Timeout, DefaultHTTPTimeout))
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d, true
		}
		return 0, true
	}
	return 0, false
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
