package lsp

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apl-lang/apl/cmd/internal/ui/browsertest"
)

var updateScreenshot = flag.Bool("update", false, "write vscode/hover.png, the README's screenshot of a hover in VS Code")

// TestVSCode runs the extension in a real VS Code (code-server: VS Code's
// workbench and extension host, in a browser) with apl lsp behind it, as
// a user meets it: a playbook with a typo opens with its diagnostic, a
// hover over a step shows its contract, the quick fix mends the typo, and
// F12 jumps to a step. Before that, apl.path names no binary: the user
// sees why the server did not start, sets the path, reloads the window,
// and the server starts. It runs with APL_VSCODE=1 (make vscode), as it installs
// code-server with npm (see vscode_install_test.go).
func TestVSCode(t *testing.T) {
	if os.Getenv("APL_VSCODE") == "" {
		t.Skip("set APL_VSCODE=1 (make vscode) to run the extension in VS Code (code-server)")
	}
	browsertest.Chromium(t)
	ctx := context.Background()
	cache, err := vscodeCache()
	if err != nil {
		t.Fatal(err)
	}
	tools, err := installVSCode(ctx, cache)
	if errors.Is(err, errNoNPM) {
		t.Skipf("SKIP: VS Code not tested: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	vsix, err := buildExtension(ctx, tools, tmp)
	if err != nil {
		t.Fatal(err)
	}
	apl := filepath.Join(tmp, "bin", "apl")
	if out, err := exec.Command("go", "build", "-o", apl, "github.com/apl-lang/apl/cmd/apl").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	// The project: a review playbook with a typo on line 39.
	ws := filepath.Join(tmp, "project")
	text := vscodePlaybook
	writeFile(t, filepath.Join(ws, "review.hcl"), text)

	home := filepath.Join(tmp, "home")
	userData := filepath.Join(tmp, "user-data")
	exts := filepath.Join(tmp, "extensions")
	settings := filepath.Join(userData, "User", "settings.json")
	setPath := func(path string) {
		writeFile(t, settings, fmt.Sprintf(`{
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "chat.disableAIFeatures": true,
  "workbench.secondarySideBar.defaultVisibility": "hidden",
  "extensions.autoCheckUpdates": false,
  "apl.path": %q
}
`, path))
	}
	setPath(filepath.Join(tmp, "no-such-dir", "apl"))
	base := []string{"--user-data-dir", userData, "--extensions-dir", exts}
	install := exec.Command(tools.codeServer, append(base, "--install-extension", vsix)...)
	install.Env = tools.env(home)
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("code-server --install-extension: %v\n%s", err, out)
	}
	url := startCodeServer(t, tools, home, append(base, "--auth", "none", "--bind-addr", "127.0.0.1:0",
		"--disable-telemetry", "--disable-update-check", "--disable-workspace-trust", ws))

	t.Cleanup(func() {
		if t.Failed() {
			logExtension(t, userData)
		}
	})
	b := browsertest.New(t)
	open := func() {
		b.Open(url + "/?folder=" + ws)
		row := `[...document.querySelectorAll('.explorer-folders-view .monaco-list-row')].find(r => r.innerText.trim() == 'review.hcl')`
		b.UntilWithin("review.hcl in the explorer", row, 2*time.Minute)
		b.Click(b.Center(row))
		b.UntilWithin("review.hcl open", word("isues")+` !== null`, time.Minute)
	}
	open()

	// apl is not where apl.path says: the user is told, and how to mend it.
	b.UntilWithin("the message that apl lsp did not start",
		`[...document.querySelectorAll('.notification-list-item-message')].some(m => m.innerText.includes('apl lsp did not start') && m.innerText.includes('apl.path'))`, time.Minute)
	if got := b.Eval(`document.querySelector('.statusbar').innerText`); !strings.Contains(got, "apl playbook") {
		t.Errorf("review.hcl is not in the language apl playbook: the status bar says %s", got)
	}
	// The path set, and the window reloaded (code-server does not see a
	// settings file written behind its back), the server starts.
	setPath(apl)
	seen := len(b.Errors()) // the expected ones: the server did not start
	open()

	// The diagnostic of apl validate, on the typo.
	b.UntilWithin("the typo underlined", `document.querySelector('.squiggly-error')`, time.Minute)
	if got := b.Eval(word("isues") + `.startContainer.parentElement.closest('.view-line').innerText`); !strings.Contains(got, "isues") {
		t.Errorf("the line under the cursor: %s", got)
	}

	// A hover over a step shows its contract. The mouse's hover waits for
	// the pointer to rest, which a loaded machine's editor can miss (seen
	// in CI), so the keyboard's Show Hover (Ctrl+K Ctrl+I) asks too, at
	// the cursor on the same word, until the hover shows.
	at := part(`step "review"`, "review")
	hover := `[...document.querySelectorAll('.monaco-hover')].find(h => h.offsetParent !== null && h.innerText.includes('returns'))`
	b.Click(b.Center(at))
	for try := 1; ; try++ {
		b.Hover(b.Center(at))
		if b.Within(hover, 3*time.Second) {
			break
		}
		b.Key("k", 2)
		b.Key("i", 2)
		if b.Within(hover, 5*time.Second) {
			break
		}
		if try == 8 {
			b.UntilWithin("the hover over step review", hover, time.Second)
		}
		b.Hover(0, 0) // away, so that the next move is one
	}
	got := b.Eval(hover + `.innerText`)
	for _, want := range []string{"review", "reviewer", "verdict", "issues", "severity"} {
		if !strings.Contains(got, want) {
			t.Errorf("the hover does not say %q:\n%s", want, got)
		}
	}
	if *updateScreenshot {
		time.Sleep(300 * time.Millisecond) // the hover's fade-in
		if err := os.WriteFile(filepath.Join("vscode", "hover.png"), b.Screenshot(false), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b.Key("Escape", 0)

	// The quick fix of "Did you mean".
	b.Click(b.Center(word("isues")))
	press(b, "the quick fix", `document.querySelector('.action-widget') && document.querySelector('.action-widget').innerText.includes('issues')`,
		func() { b.Key(".", 2) }) // Ctrl+.
	b.Key("Enter", 0)
	b.UntilWithin("the typo mended and its diagnostic gone", `!document.querySelector('.squiggly-error') && `+word("review.output.issues)")+` !== null`, time.Minute)

	// F12 on steps.review jumps to step "review".
	line := lineOf(t, text, `step "review" {`)
	b.Click(b.Center(part("steps.review.output.issues)", "review")))
	press(b, "the jump to step review", fmt.Sprintf(`document.querySelector('.statusbar').innerText.includes('Ln %d,')`, line),
		func() { b.Key("F12", 0) })

	// code-server's own pages log errors of their own (no network, no
	// marketplace); the extension's must not be among them.
	for _, e := range b.Errors()[seen:] {
		if strings.Contains(e, "apl") {
			t.Errorf("the page's console: %.500s", e)
		}
	}
}

// logExtension logs what the extension host said of the extension and
// what the language client wrote, for a failed test.
func logExtension(t *testing.T, userData string) {
	logs, _ := filepath.Glob(filepath.Join(userData, "logs", "*", "exthost*", "*"))
	for _, path := range logs {
		if !strings.HasSuffix(path, ".log") {
			more, _ := filepath.Glob(filepath.Join(path, "*apl*.log"))
			logs = append(logs, more...)
		}
	}
	for _, path := range logs {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, "apl") || strings.Contains(path, "apl") {
				t.Logf("%s: %s", filepath.Base(path), line)
			}
		}
	}
}

// press does keys until expr holds in the page: an editor busy starting
// can drop a key press, so one that shows nothing in 5 seconds is pressed
// again, up to 8 times.
func press(b *browsertest.Browser, what, expr string, keys func()) {
	for try := 1; try < 8; try++ {
		keys()
		if b.Within(expr, 5*time.Second) {
			return
		}
	}
	keys()
	b.UntilWithin(what, expr, 10*time.Second)
}

// vscodePlaybook is the playbook TestVSCode opens, short enough that
// every line shows in the window (an editor draws only those), with a
// typo in triage's prompt.
const vscodePlaybook = `playbook "review" {
  description = "Review a path with Claude Code, then triage the issues."
}

input "path" {
  type    = string
  default = "."
}

driver "claude" {
  type  = "claude-code"
  model = "sonnet"
}

agent "reviewer" {
  type   = "code-reviewer"
  driver = "claude"
  system = "You review code. You read files; you never change them."
}

step "review" {
  returns = object({
    verdict = string
    issues = list(object({
      file     = string
      line     = number
      severity = string
      problem  = string
    }))
  })
  agent "reviewer" {
    prompt = "Review the code under ${inputs.path}: a verdict, and every issue."
  }
}

step "triage" {
  returns = object({ must_fix = list(string) })
  agent "reviewer" {
    prompt = "Which must be fixed? ${jsonencode(steps.review.output.isues)}"
  }
}

output {
  verdict  = steps.review.output.verdict
  issues   = length(steps.review.output.issues)
  must_fix = steps.triage.output.must_fix
}
`

// word is a DOM Range over the first occurrence of w in the editor's
// visible lines, for Center.
func word(w string) string { return part(w, w) }

// part is a DOM Range over sub in the first occurrence of w in the
// editor's visible lines.
func part(w, sub string) string {
	// A line is drawn as one span per token: the text is searched in the
	// line's whole text, and the range spans the tokens it covers.
	return fmt.Sprintf(`(function (word, sub) {
  for (const line of document.querySelectorAll('.monaco-editor .view-lines .view-line')) {
    const nodes = [];
    const walker = document.createTreeWalker(line, NodeFilter.SHOW_TEXT);
    let n;
    while ((n = walker.nextNode())) nodes.push(n);
    const text = nodes.map(n => n.textContent).join('').replace(/\u00a0/g, ' ');
    const i = text.indexOf(word);
    if (i < 0) continue;
    const start = i + word.indexOf(sub), end = start + sub.length;
    const r = document.createRange();
    let at = 0;
    for (const n of nodes) {
      const len = n.textContent.length;
      if (start >= at && start <= at + len) r.setStart(n, start - at);
      if (end >= at && end <= at + len) { r.setEnd(n, end - at); return r; }
      at += len;
    }
  }
  return null;
})(%q, %q)`, w, sub)
}

// lineOf is the 1-based line of text that holds s.
func lineOf(t *testing.T, text, s string) int {
	t.Helper()
	i := strings.Index(text, s)
	if i < 0 {
		t.Fatalf("no %q in the playbook", s)
	}
	return strings.Count(text[:i], "\n") + 1
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// startCodeServer starts code-server on a free port and returns its URL.
// It stops with the test, its extension host and apl lsp with it.
func startCodeServer(t *testing.T, tools vscodeTools, home string, args []string) string {
	t.Helper()
	cmd := exec.Command(tools.codeServer, args...)
	cmd.Env = tools.env(home)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	listening := regexp.MustCompile(`HTTP server listening on (http://127\.0\.0\.1:\d+)`)
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
		close(urls)
	}()
	select {
	case url, ok := <-urls:
		if !ok {
			t.Fatalf("code-server exited")
		}
		return url
	case <-time.After(2 * time.Minute):
		t.Fatal("code-server did not say where it listens in 2 minutes")
	}
	return ""
}
