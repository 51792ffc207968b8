package interp

import (
	"testing"

	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/lang"
)

// TestDriverRejectedByRunIsRejectedByValidate checks that the agent
// package's schema, handed to the loader, rejects a driver block exactly
// when a run would fail to make its driver: the block's settings are typed
// at load, not at the first agent call.
func TestDriverRejectedByRunIsRejectedByValidate(t *testing.T) {
	tests := []struct {
		name, block string
		ok          bool
	}{
		{"openai", `type = "openai"
max_tokens = 1024
timeout = "2m"
retries = 2
prices = { m = { input = 1, output = 2 } }`, true},
		{"string max_tokens", `type = "openai"
max_tokens = "lots"`, false},
		{"timeout not a duration", `type = "openai"
timeout = "forever"`, false},
		{"whole number as a string", `type = "openai"
max_tokens = "1024"`, true},
		{"negative retries", `type = "anthropic"
retries = -1`, false},
		{"fractional max_tokens", `type = "anthropic"
max_tokens = 1.5`, false},
		{"unknown setting", `type = "openai"
max_tokns = 10`, false},
		{"setting of another type", `type = "codex"
base_url = "http://x"`, false},
		{"unknown price", `type = "openai"
prices = { m = { inptu = 1 } }`, false},
		{"command", `type = "command"
command = ["./agent.sh"]
input = "file"
output = "json"
fields = { text = "result" }`, true},
		{"command without argv", `type = "command"`, false},
		{"command as a string", `type = "command"
command = "./agent.sh"`, false},
		{"bad input", `type = "command"
command = ["x"]
input = "pipe"`, false},
		{"fields with text output", `type = "command"
command = ["x"]
fields = { text = "a" }`, false},
		{"preset options", `type = "claude-code"
options = { max_turns = 3, allowed_tools = ["Read"] }`, true},
		{"unknown preset option", `type = "gemini"
options = { approval = "yolo" }`, false},
		{"options not an object", `type = "claude-code"
options = "fast"`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := map[string][]byte{"p.hcl": []byte("playbook \"p\" {}\ndriver \"d\" {\n" + tt.block + "\n}\n")}
			_, diags := (&lang.Loader{Drivers: agent.DriverSchema{}}).LoadSources(src, ".")
			pb, d := (&lang.Loader{}).LoadSources(src, ".")
			if d.HasErrors() {
				t.Fatalf("load without a schema: %s", d.Error())
			}
			cfg, runErr := DriverConfig(pb.Drivers["d"])
			if runErr == nil {
				_, runErr = agent.New(cfg)
			}
			if (runErr == nil) != tt.ok {
				t.Errorf("run: err = %v, want ok = %v", runErr, tt.ok)
			}
			if diags.HasErrors() == tt.ok {
				t.Errorf("validate: %v, want ok = %v (run: %v)", diags, tt.ok, runErr)
			}
		})
	}
}
