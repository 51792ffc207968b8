package examples_test

import (
	"testing"
	"time"

	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/lang"
	"github.com/google/go-cmp/cmp"
)

// TestExampleDrivers checks that the driver blocks of the examples decode
// to the agent.Config they mean, durations, retries and prices included,
// and that the agent package accepts them. The CLI scripts in
// cmd/apl/testdata/script-examples run them.
func TestExampleDrivers(t *testing.T) {
	tests := []struct {
		dir, driver string
		want        agent.Config
	}{
		{
			dir: "claude-code", driver: "claude",
			want: agent.Config{
				Type:    agent.TypeClaudeCode,
				Model:   "sonnet",
				Timeout: 5 * time.Minute,
				Options: map[string]any{
					"permission_mode": "acceptEdits",
					"max_turns":       8.0,
					"allowed_tools":   []any{"Read", "Grep"},
				},
				Prices: map[string]agent.Price{"sonnet": {InputPerMTok: 3, OutputPerMTok: 15}},
			},
		},
		{
			dir: "local-openai", driver: "ollama",
			want: agent.Config{
				Type:      agent.TypeOpenAI,
				BaseURL:   "http://localhost:11434/v1",
				Model:     "qwen2.5-coder",
				MaxTokens: 1024,
				Timeout:   2 * time.Minute,
				Retry:     agent.Retry{Max: 3},
				Prices:    map[string]agent.Price{"qwen2.5-coder": {}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			pb, diags := lang.Load(tt.dir)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			dr := pb.Drivers[tt.driver]
			if dr == nil {
				t.Fatalf("no driver %q", tt.driver)
			}
			got, err := interp.DriverConfig(dr)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("DriverConfig (-want +got):\n%s", diff)
			}
			if _, err := agent.New(got); err != nil {
				t.Errorf("agent.New: %v", err)
			}
		})
	}
}
