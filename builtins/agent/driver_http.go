package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"
)

// maxBody caps what is read of an HTTP answer.
const maxBody = 32 << 20

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
// up to Retry.Max attempts, and returns the body of the first 2xx answer.
// Errors carry the status and the start of the answer, never the key; the
// returned body is the last one read, for the caller's artifact.
func (h *httpDriver) post(ctx context.Context, headers map[string]string, body []byte) ([]byte, error) {
	secrets := append([]string{h.key()}, secretValues(nil)...)
	var last []byte
	for attempt := 1; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.endpoint, bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("driver %s: %w", h.kind, err)
		}
		req.Header.Set("Content-Type", "application/json")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := h.client.Do(req)
		if err != nil {
			return last, h.transportError(ctx, err, secrets)
		}
		last, err = io.ReadAll(io.LimitReader(resp.Body, maxBody))
		resp.Body.Close()
		if k := h.key(); k != "" {
			// A server that echoes the key must not put it in artifacts.
			last = bytes.ReplaceAll(last, []byte(k), []byte("[REDACTED]"))
		}
		if err != nil {
			return last, h.transportError(ctx, err, secrets)
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
			return last, fmt.Errorf("driver %s: HTTP %d%s: %s", h.kind, resp.StatusCode, tries,
				redact(excerpt(string(last), 300), secrets))
		}
		wait := h.retry.Backoff << (attempt - 1)
		if ra, ok := retryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
			wait = ra
		}
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
			// Waiting would only end in a timeout; say what happened.
			return last, fmt.Errorf("driver %s: HTTP %d, and the retry wait of %s outlasts the call's timeout: %s",
				h.kind, resp.StatusCode, wait, redact(excerpt(string(last), 300), secrets))
		}
		if err := h.retry.Sleep(ctx, wait); err != nil {
			return last, h.transportError(ctx, err, secrets)
		}
	}
}

// transportError words a failure to talk to the server, telling a timeout
// apart from other failures.
func (h *httpDriver) transportError(ctx context.Context, err error, secrets []string) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("driver %s: %w", h.kind, ErrTimeout)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("driver %s: %w", h.kind, ctx.Err())
	}
	return fmt.Errorf("driver %s: %s", h.kind, redact(err.Error(), secrets))
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
