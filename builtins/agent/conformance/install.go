// Package conformance runs apl's agent drivers against the real agent CLIs
// (claude-code, codex, gemini, at pinned versions installed with npm) and
// apl's own HTTP drivers (openai, anthropic), all pointed at a fake model
// server on 127.0.0.1, so that what the drivers assume about the CLIs'
// output, flags and failures is checked against the programs themselves.
//
// The suite is a Go test that runs only with APL_CONFORMANCE=1 (`make
// conformance`). It needs npm and the npm registry; without them it prints
// one SKIP line and passes. It never talks to a real model: every CLI runs
// with HOME in a temporary directory, its base URL on the fake server, and
// telemetry, updates and plugins off.
//
// With APL_RECORD_EXAMPLES=1 (`make record-examples`) the same CLIs and
// server record the cassettes of examples/claude-code and
// examples/local-openai (TestRecordExamples).
package conformance

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Pinned versions of the CLIs. Record changes in spec/language.md (the
// driver section) too.
var pinned = map[string]string{
	"@anthropic-ai/claude-code": "2.1.330",
	"@openai/codex":             "0.169.0",
	"@google/gemini-cli":        "0.61.0",
}

// cacheDir is where the CLIs are installed: $APL_CONFORMANCE_CACHE, else
// apl-conformance in the user's cache directory. The pinned versions name
// a subdirectory, so a change of pins installs afresh.
func cacheDir() (string, error) {
	base := os.Getenv("APL_CONFORMANCE_CACHE")
	if base == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		base = filepath.Join(c, "apl-conformance")
	}
	return filepath.Join(base, "claude-"+pinned["@anthropic-ai/claude-code"]+
		"_codex-"+pinned["@openai/codex"]+"_gemini-"+pinned["@google/gemini-cli"]), nil
}

// errNoNPM says the CLIs cannot be installed here: no npm, or no registry.
var errNoNPM = errors.New("npm or its registry is unreachable")

// install makes sure the pinned CLIs are in dir and returns their bin
// directory. It wraps errNoNPM when npm cannot be used at all, so the
// caller can skip rather than fail.
func install(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "node_modules", ".bin")
	if installed(bin) {
		return bin, nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", fmt.Errorf("%w: npm is not on PATH", errNoNPM)
	}
	probe, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(probe, npm, "view", "@openai/codex@"+pinned["@openai/codex"], "version").CombinedOutput(); err != nil {
		return "", fmt.Errorf("%w: npm view: %v: %s", errNoNPM, err, lastLines(out))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// A package.json of its own keeps npm from climbing to a parent
	// project.
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"private":true}`+"\n"), 0o644); err != nil {
		return "", err
	}
	args := []string{"install", "--no-audit", "--no-fund", "--no-save", "--prefix", dir}
	for _, p := range []string{"@anthropic-ai/claude-code", "@openai/codex", "@google/gemini-cli"} {
		args = append(args, p+"@"+pinned[p])
	}
	run, cancel2 := context.WithTimeout(ctx, 6*time.Minute)
	defer cancel2()
	if out, err := exec.CommandContext(run, npm, args...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("npm install: %v: %s", err, lastLines(out))
	}
	if !installed(bin) {
		return "", fmt.Errorf("npm install left no claude, codex and gemini in %s", bin)
	}
	return bin, nil
}

func installed(bin string) bool {
	for _, name := range []string{"claude", "codex", "gemini"} {
		if _, err := os.Stat(filepath.Join(bin, name)); err != nil {
			return false
		}
	}
	return true
}

// lastLines returns the last few lines of a command's output, for errors.
func lastLines(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return strings.Join(lines, "\n")
}
