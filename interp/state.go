package interp

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Run statuses.
const (
	StatusRunning     = "running"
	StatusCompleted   = "completed"
	StatusFailed      = "failed"
	StatusInterrupted = "interrupted"
)

// Step statuses.
const (
	StepPending   = "pending"
	StepRunning   = "running"
	StepCompleted = "completed"
	StepFailed    = "failed"
	StepSkipped   = "skipped"
)

// stateVersion is the state file format; resume refuses other versions.
const stateVersion = 1

// State is everything a run knows, as written to its state file after
// every transition (seed 001, section 1).
type State struct {
	Meta   Meta                       `json:"_meta"`
	Inputs map[string]json.RawMessage `json:"inputs"`
	Steps  map[string]*StepRecord     `json:"steps"`
	// Caps counts how often each capped goto was taken: "step/rule" → n.
	Caps map[string]int `json:"caps"`
	// Vars are the values gates assigned with `set`.
	Vars    map[string]json.RawMessage `json:"vars"`
	Events  []Event                    `json:"event_log"`
	Metrics Metrics                    `json:"metrics"`
	// Output is the run's output object, once the run has ended.
	Output json.RawMessage `json:"output,omitempty"`
}

// Meta is the run's header.
type Meta struct {
	Version        int    `json:"version"`
	RunID          string `json:"run_id"`
	Playbook       string `json:"playbook"`
	PlaybookRef    string `json:"playbook_ref"`
	PlaybookHash   string `json:"playbook_hash"`
	Mode           string `json:"mode,omitempty"`
	Workdir        string `json:"workdir"`
	Status         string `json:"status"`
	Recommendation string `json:"recommendation,omitempty"`
	Reason         string `json:"reason,omitempty"`
	// CurrentStep is the step to run next (or running now); "" once the
	// main steps are done.
	CurrentStep    string    `json:"current_step"`
	StartedAt      time.Time `json:"started_at"`
	LastCheckpoint time.Time `json:"last_checkpoint"`
	// OnFailure is set once the run failed and its on_failure steps
	// began; OnFailureStep is the next of them to run.
	OnFailure     bool   `json:"on_failure,omitempty"`
	OnFailureStep string `json:"on_failure_step,omitempty"`
}

// StepRecord is what the run knows about one step.
type StepRecord struct {
	Status      string          `json:"status"`
	Attempts    int             `json:"attempts"`
	Calls       int             `json:"calls,omitempty"` // agent calls, re-prompts included
	Output      json.RawMessage `json:"output,omitempty"`
	Error       string          `json:"error,omitempty"`
	ExitCode    *int            `json:"exit_code,omitempty"`
	SkipReason  string          `json:"skip_reason,omitempty"`
	StartedAt   *time.Time      `json:"started_at,omitempty"`
	CompletedAt *time.Time      `json:"completed_at,omitempty"`
	DurationS   float64         `json:"duration_s"`
	Tokens      int             `json:"tokens,omitempty"`
	CostUSD     *float64        `json:"cost_usd,omitempty"`
}

// Metrics aggregate the run (seed 001, section 8).
type Metrics struct {
	TotalTokens  int      `json:"total_tokens_used"`
	TotalCostUSD *float64 `json:"total_cost_usd"`
	StepsRun     int      `json:"steps_run"`
	StepsFailed  int      `json:"steps_failed"`
	AgentCalls   int      `json:"agent_calls"`
	DurationS    float64  `json:"total_duration_s"`
}

const (
	stateFile  = "state.json"
	backupFile = "state.json.bak"
)

// writeState writes the state atomically: a temp file in the same
// directory, fsync, then the current file becomes the backup and the temp
// file takes its place.
func writeState(dir string, st *State, sync bool) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("encode state: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".state-*.tmp")
	if err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write state: %w", err)
	}
	if sync {
		if err := tmp.Sync(); err != nil {
			tmp.Close()
			return fmt.Errorf("write state: %w", err)
		}
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	cur := filepath.Join(dir, stateFile)
	if err := os.Rename(cur, filepath.Join(dir, backupFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("keep state backup: %w", err)
	}
	if err := os.Rename(tmp.Name(), cur); err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	if sync {
		if d, err := os.Open(dir); err == nil {
			d.Sync()
			d.Close()
		}
	}
	return nil
}

// readState reads a run's state, falling back to the backup when the state
// file is missing or corrupt. It says which file it used.
func readState(dir string) (*State, string, error) {
	var firstErr error
	for _, name := range []string{stateFile, backupFile} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		var st State
		if err := json.Unmarshal(data, &st); err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("%s is corrupt: %w", name, err)
			}
			continue
		}
		if st.Meta.Version != stateVersion {
			return nil, "", fmt.Errorf("%s has state format %d; this apl reads format %d", name, st.Meta.Version, stateVersion)
		}
		if st.Steps == nil {
			st.Steps = map[string]*StepRecord{}
		}
		if st.Caps == nil {
			st.Caps = map[string]int{}
		}
		if st.Vars == nil {
			st.Vars = map[string]json.RawMessage{}
		}
		return &st, name, nil
	}
	return nil, "", fmt.Errorf("no readable state in %s: %w", dir, firstErr)
}
