package agent

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fake is a fake agent CLI: a shell script put first on PATH that records
// what it was given into dir and then runs body.
type fake struct {
	dir string // where the script records argv, stdin, env and pwd
}

// fakeCLI installs an executable named name whose script records its argv
// (NUL-separated), stdin, environment and working directory into the
// returned fake's dir, then runs body. FAKE_OUT names that dir inside body.
func fakeCLI(t *testing.T, name, body string) fake {
	t.Helper()
	bin := t.TempDir()
	out := t.TempDir()
	script := "#!/bin/sh\n" +
		"out='" + out + "'\n" +
		"FAKE_OUT=\"$out\"\n" +
		"for a in \"$@\"; do printf '%s\\0' \"$a\"; done > \"$out/argv\"\n" +
		"cat > \"$out/stdin\"\n" +
		"env > \"$out/env\"\n" +
		"pwd > \"$out/pwd\"\n" +
		body + "\n"
	if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return fake{dir: out}
}

func (f fake) read(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(f.dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// argv is the argument list the fake was run with, its name left out.
func (f fake) argv(t *testing.T) []string {
	t.Helper()
	data := f.read(t, "argv")
	if data == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(data, "\x00"), "\x00")
}

// env is the fake's environment, for the variables named.
func (f fake) env(t *testing.T, names ...string) map[string]string {
	t.Helper()
	all := map[string]string{}
	for _, line := range strings.Split(f.read(t, "env"), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			all[k] = v
		}
	}
	out := map[string]string{}
	for _, n := range names {
		if v, ok := all[n]; ok {
			out[n] = v
		}
	}
	return out
}

// heredoc returns a shell command printing text exactly.
func heredoc(text string) string {
	return "cat <<'APL_EOF'\n" + text + "\nAPL_EOF"
}

// hasSeq reports whether list holds want as consecutive elements.
func hasSeq(list []string, want ...string) bool {
	for i := 0; i+len(want) <= len(list); i++ {
		ok := true
		for j, w := range want {
			if list[i+j] != w {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// pidAlive reports whether pid is a live, non-zombie process.
func pidAlive(pid string) bool {
	data, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	i := bytes.LastIndexByte(data, ')')
	return i < 0 || i+2 >= len(data) || data[i+2] != 'Z'
}
