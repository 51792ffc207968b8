package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/cmd/internal/ui"
	"github.com/apl-lang/apl/lang"
	"github.com/apl-lang/apl/stdlib"
)

// TestUIPlaybookDryRun: apl ui's playbook page draws stdlib:phase-runner
// with the path of a dry run, as apl graph --dry-run does, and plan's
// worst case per step.
func TestUIPlaybookDryRun(t *testing.T) {
	t.Chdir(t.TempDir())
	e := &env{stdout: io.Discard, stderr: io.Discard, loader: &lang.Loader{Stdlib: stdlib.FS(), Builtins: builtins.Funcs().Names(),
		Signatures: builtins.Funcs(), DecodeAnswer: agent.CheckAnswer, CheckScript: builtins.CheckScriptTemplate, Drivers: agent.DriverSchema{}}}
	opts := e.uiOptions(t.TempDir(), nil)
	opts.Render = func(dot, format string) ([]byte, error) { return []byte("<svg>" + dot + "</svg>"), nil }
	s := ui.New(opts)
	r := httptest.NewRequest("GET", "http://127.0.0.1:1/playbook?ref=stdlib:phase-runner&dry=1", nil)
	r.AddCookie(&http.Cookie{Name: "apl_ui_token", Value: s.Token()})
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	body := w.Body.String()
	if w.Code != http.StatusOK {
		t.Fatalf("%d %s", w.Code, body)
	}
	for _, want := range []string{
		"Playbook phase-runner",
		"dry run: <span class=\"status s-",
		"run (dry run): ",  // the path's title in the drawing
		`id="node-locate"`, // ids on the nodes
		"Worst case per step",
		"agent calls",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q:\n%.3000s", want, body)
		}
	}
	if strings.Contains(body, "dry run: input") || strings.Contains(body, `class="err"`) {
		t.Errorf("the page shows an error:\n%.3000s", body)
	}
}
