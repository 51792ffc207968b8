package agent

import (
	"fmt"
	"path/filepath"
)

// Setup is what a driver needs of the machine it runs on, for a check
// before a run (apl doctor): the program a CLI driver runs and where that
// program finds its login, or an HTTP driver's endpoint and key.
type Setup struct {
	// Program is what a CLI driver runs, looked up in PATH; "" for the
	// HTTP drivers.
	Program string
	// VersionArgs print the program's version; nil when it has no
	// known way.
	VersionArgs []string
	// BaseURL and KeyEnv are an HTTP driver's endpoint and the variable
	// its API key is read from.
	BaseURL string
	KeyEnv  string
	// AuthEnv are the variables a CLI takes a key or token from, AuthFiles
	// the files its interactive login leaves, relative to the home
	// directory; either one is enough. Both empty: nothing to check.
	AuthEnv   []string
	AuthFiles []string
}

// SetupOf says what the driver cfg describes needs. It reads the
// environment for the HTTP drivers' base URLs, as New does.
func SetupOf(cfg Config) (Setup, error) {
	program := func(base []string) string {
		if len(cfg.Command) > 0 {
			return cfg.Command[0]
		}
		return base[0]
	}
	switch cfg.Type {
	case TypeCommand:
		if len(cfg.Command) == 0 {
			return Setup{}, fmt.Errorf("driver command: command is not set")
		}
		return Setup{Program: cfg.Command[0]}, nil
	case TypeClaudeCode:
		return Setup{Program: program(claudeBase), VersionArgs: []string{"--version"},
			AuthEnv:   []string{"ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_AUTH_TOKEN"},
			AuthFiles: []string{filepath.Join(".claude", ".credentials.json")}}, nil
	case TypeCodex:
		return Setup{Program: program(codexBase), VersionArgs: []string{"--version"},
			AuthEnv:   []string{"CODEX_API_KEY", "OPENAI_API_KEY"},
			AuthFiles: []string{filepath.Join(".codex", "auth.json")}}, nil
	case TypeGemini:
		return Setup{Program: program(geminiBase), VersionArgs: []string{"--version"},
			AuthEnv:   []string{"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS"},
			AuthFiles: []string{filepath.Join(".gemini", "oauth_creds.json")}}, nil
	case TypeOpenAI:
		base, err := baseURL(cfg, "OPENAI_BASE_URL", "https://api.openai.com/v1")
		return Setup{BaseURL: base, KeyEnv: keyEnvOf(cfg, "OPENAI_API_KEY")}, err
	case TypeAnthropic:
		base, err := baseURL(cfg, "ANTHROPIC_BASE_URL", "https://api.anthropic.com")
		return Setup{BaseURL: base, KeyEnv: keyEnvOf(cfg, "ANTHROPIC_API_KEY")}, err
	}
	return Setup{}, fmt.Errorf("unknown driver type %q", cfg.Type)
}

func keyEnvOf(cfg Config, def string) string {
	if cfg.APIKeyEnv != "" {
		return cfg.APIKeyEnv
	}
	return def
}
