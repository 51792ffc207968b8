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

// promptWatch is the terminal: it keeps what is printed, and closes
// prompted once a question's prompt is shown.
type promptWatch struct {
	mu       sync.Mutex
	buf      bytes.Buffer
	prompted chan struct{}
}

func (w *promptWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.HasSuffix(w.buf.String(), "choice> ") && w.prompted != nil {
		close(w.prompted)
		w.prompted = nil
	}
	return len(p), nil
}

func (w *promptWatch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// Progress lines that come while a question is on the screen (other
// items go on) wait until it is answered: printed at once, they landed
// on the prompt ("choice> Step: build [a] complete.").
func TestProgressWaitsForTheAnswer(t *testing.T) {
	pb, diags := (&lang.Loader{}).LoadSources(map[string][]byte{"p.hcl": []byte(`playbook "p" {}
step "s" {
  shell { command = ["true"] }
}
`)}, t.TempDir())
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	term := &promptWatch{prompted: make(chan struct{})}
	prompted := term.prompted
	p := newProgress(term, progressOptions{}, pb)
	in, typed := io.Pipe()
	defer typed.Close()
	a := &termAsker{out: term, in: in, hold: p.hold}
	answered := make(chan string, 1)
	go func() {
		got, err := a.Ask(context.Background(), interp.Question{Step: "decide", Item: "b", Question: "Go on?", Options: []string{"yes", "no"}})
		if err != nil {
			got = err.Error()
		}
		answered <- got
	}()
	<-prompted
	p.println("Step: build [a] complete.")
	if got := term.String(); !strings.HasSuffix(got, "choice> ") {
		t.Fatalf("a progress line was printed on the prompt:\n%s", got)
	}
	typed.Write([]byte("1\n"))
	if got := <-answered; got != "yes" {
		t.Errorf("answer %q, want yes", got)
	}
	// A terminal echoes the typed answer and its newline; this one does
	// not, so the held line follows the prompt here.
	if got := term.String(); !strings.HasSuffix(got, "choice> Step: build [a] complete.\n") {
		t.Errorf("the line that came while the question waited is not printed after the answer:\n%s", got)
	}
	p.println("Step: build [b] complete.")
	if got := term.String(); !strings.HasSuffix(got, "Step: build [b] complete.\n") {
		t.Errorf("a line after the answer is not printed at once:\n%s", got)
	}
}
