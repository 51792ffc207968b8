package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/lang"
)

// markOnPrompt is the terminal: it keeps what the asker prints, and
// creates mark once a question's prompt is shown.
type markOnPrompt struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	mark string
}

func (w *markOnPrompt) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), "choice> ") {
		os.WriteFile(w.mark, nil, 0o644)
	}
	return len(p), nil
}

// A question at the terminal holds the for_each around it: items a, b
// and c at concurrency 2, b asks, a ends while the question is on the
// screen. c starts only after the answer was typed.
func TestTerminalQuestionHoldsTheItems(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "asked")
	pb, diags := (&lang.Loader{}).LoadSources(map[string][]byte{"held.hcl": []byte(`
playbook "held" {}
step "work" {
  for_each    = "['a', 'b', 'c']"
  key         = "item"
  concurrency = 2
  step "wait" {
    when = "item == 'a'"
    shell { command = ["sh", "-c", "while [ ! -e ` + mark + ` ]; do sleep 0.05; done"] }
  }
  step "decide" {
    when = "item == 'b'"
    ask {
      question = "Go on?"
      options  = ["yes", "no"]
    }
  }
}
`)}, dir)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	in, typed := io.Pipe()
	defer typed.Close()
	term := &markOnPrompt{mark: mark}
	var mu sync.Mutex
	var evs []interp.Event
	obs := interp.ObserverFunc(func(e interp.Event) {
		mu.Lock()
		evs = append(evs, e)
		mu.Unlock()
		if e.Type == interp.EventItemCompleted && e.Item == "a" {
			// The person answers once a has ended.
			go typed.Write([]byte("1\n"))
		}
	})
	res, err := interp.Start(context.Background(), pb, "held.hcl", interp.Options{Workdir: dir, NoSync: true,
		Shell: &builtins.Shell{Workdir: dir, Policy: builtins.DefaultPolicy}, Asker: &termAsker{out: term, in: in}, Observer: obs})
	if err != nil || res.Status != interp.StatusCompleted {
		t.Fatalf("%v %+v", err, res)
	}
	decided := slices.IndexFunc(evs, func(e interp.Event) bool { return e.Type == interp.EventHumanDecision })
	cStarted := slices.IndexFunc(evs, func(e interp.Event) bool { return e.Type == interp.EventItemStarted && e.Item == "c" })
	if decided < 0 || cStarted < decided {
		t.Errorf("item c started (event %d) before the answer at the terminal (event %d)", cStarted, decided)
	}
}
