package interp

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestOpenAIDriverEndToEnd runs a playbook whose agent talks to an
// OpenAI-compatible server (a local fake): the step's returns type goes
// out as response_format, the answer comes back typed, tokens and the
// price table's cost are counted, and a 429 is retried.
func TestOpenAIDriverEndToEnd(t *testing.T) {
	var mu sync.Mutex
	var bodies []map[string]any
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if r.URL.Path != "/v1/chat/completions" {
			t.Errorf("path %s", r.URL.Path)
		}
		if calls == 1 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		b, _ := io.ReadAll(r.Body)
		var body map[string]any
		json.Unmarshal(b, &body)
		bodies = append(bodies, body)
		fmt.Fprint(w, `{"choices": [{"message": {"role": "assistant", "content": "{\"alignment_score\": 8.5, \"issues\": []}"}, "finish_reason": "stop"}],
			"usage": {"prompt_tokens": 1000, "completion_tokens": 200}}`)
	}))
	defer srv.Close()
	t.Setenv("OPENAI_API_KEY", "")
	pb := load(t, fmt.Sprintf(`
playbook "o" {}
driver "local" {
  type     = "openai"
  base_url = "%s/v1"
  model    = "qwen"
  prices   = { qwen = { input = 1, output = 2 } }
}
agent "rater" {
  driver = "local"
}
step "rate" {
  returns = object({ alignment_score = number, issues = list(string) })
  agent "rater" { prompt = "Rate phase 6.3." }
}
output {
  score = steps.rate.output.alignment_score
  cost  = run.cost_usd
  tokens = run.tokens
}
`, srv.URL))
	res, _ := startWith(t, pb, Options{})
	if res.Status != StatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.Reason)
	}
	// 1000 input tokens at $1/M and 200 output at $2/M.
	if got := string(res.OutputJSON); got != `{"cost":0.0014,"score":8.5,"tokens":1200}` {
		t.Errorf("output %s", got)
	}
	if calls != 2 || len(bodies) != 1 {
		t.Fatalf("%d calls; the 429 was not retried once", calls)
	}
	body := bodies[0]
	if body["model"] != "qwen" {
		t.Errorf("model %v", body["model"])
	}
	rf, _ := json.Marshal(body["response_format"])
	if !strings.Contains(string(rf), `"json_schema"`) || !strings.Contains(string(rf), `"alignment_score"`) {
		t.Errorf("response_format %s does not carry the returns schema", rf)
	}
}
