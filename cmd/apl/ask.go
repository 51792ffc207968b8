package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/apl-lang/apl/interp"
)

// termAsker asks ask steps' questions at the terminal: the question and
// numbered options on stderr, the choice (a number or an option) read
// from stdin.
type termAsker struct {
	mu  sync.Mutex // items of a for_each may ask at once; one question at a time
	out io.Writer
	in  io.Reader
	// lines are in's lines, read by one goroutine, from the first
	// question on, so that a question can stop waiting (Ctrl-C) without
	// losing the reader.
	lines <-chan line
	once  sync.Once
	// hold takes the status block off the screen while a question is
	// asked; it returns what puts it back.
	hold func() (release func())
}

type line struct {
	text string
	err  error
}

// asker returns a terminal asker when stdin and stderr are terminals and
// the user did not ask for a non-interactive run; otherwise nil, which
// makes a run pause as waiting at an unanswered ask.
func asker(stderr io.Writer, nonInteractive bool, p *progress) interp.Asker {
	if nonInteractive || !isTerminal(os.Stdin) {
		return nil
	}
	if f, ok := stderr.(*os.File); !ok || !isTerminal(f) {
		return nil
	}
	return &termAsker{out: stderr, in: os.Stdin, hold: p.hold}
}

// readLines reads r's lines on a goroutine of its own.
func readLines(r io.Reader) <-chan line {
	ch := make(chan line)
	go func() {
		in := bufio.NewReader(r)
		for {
			s, err := in.ReadString('\n')
			ch <- line{s, err}
			if err != nil {
				close(ch)
				return
			}
		}
	}()
	return ch
}

// Ask asks until it gets one of the options, or for a text question a
// line that is not empty (an empty one takes the default, if any). An interrupt (ctx done)
// ends the wait at once and records no choice: Ctrl-C at the prompt stops
// the run, as it does anywhere else.
func (a *termAsker) Ask(ctx context.Context, q interp.Question) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.once.Do(func() { a.lines = readLines(a.in) })
	if a.hold != nil {
		defer a.hold()()
	}
	where := interp.Waiting{Step: q.Step, Item: q.Item}.Key()
	for {
		fmt.Fprintf(a.out, "\n%s: %s\n", where, q.Question)
		prompt := "choice> "
		if q.Text {
			prompt = "answer> "
			if q.Default != "" {
				prompt = fmt.Sprintf("answer [%s]> ", q.Default)
			}
		}
		for i, o := range q.Options {
			def := ""
			if o == q.Default {
				def = " (default)"
			}
			fmt.Fprintf(a.out, "  %d) %s%s\n", i+1, o, def)
		}
		fmt.Fprint(a.out, prompt)
		var l line
		var ok bool
		select {
		case <-ctx.Done():
			fmt.Fprintln(a.out)
			return "", ctx.Err()
		case l, ok = <-a.lines:
		}
		if !ok || l.err != nil && l.text == "" {
			err := l.err
			if !ok {
				err = io.EOF
			}
			return "", fmt.Errorf("no answer to %q: %w", q.Question, err)
		}
		if ctx.Err() != nil {
			// Enter came with the interrupt: the choice was not made.
			return "", ctx.Err()
		}
		text := strings.TrimSpace(l.text)
		if text == "" && q.Default != "" {
			return q.Default, nil
		}
		if q.Text {
			if text != "" {
				return text, nil
			}
			fmt.Fprintln(a.out, "Type an answer.")
			continue
		}
		if n, err := strconv.Atoi(text); err == nil && n >= 1 && n <= len(q.Options) {
			return q.Options[n-1], nil
		}
		for _, o := range q.Options {
			if o == text {
				return o, nil
			}
		}
		fmt.Fprintf(a.out, "%q is not one of the options.\n", text)
	}
}

// parseAnswers reads --answer STEP=CHOICE flags (STEP[ITEM]=CHOICE for an
// item of a for_each step).
func parseAnswers(list []string) (map[string]string, error) {
	out := map[string]string{}
	for _, a := range list {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--answer %q: want STEP=CHOICE", a)
		}
		out[k] = v
	}
	return out, nil
}

// WaitsForPerson implements interp.PersonAsker: a question waits at the
// terminal until someone answers, and holds the for_each steps around it
// meanwhile.
func (a *termAsker) WaitsForPerson() bool { return true }
