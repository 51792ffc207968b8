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
	in  *bufio.Reader
	out io.Writer
}

// asker returns a terminal asker when stdin and stderr are terminals and
// the user did not ask for a non-interactive run; otherwise nil, which
// makes a run pause as waiting at an unanswered ask.
func asker(stderr io.Writer, nonInteractive bool) interp.Asker {
	if nonInteractive || !isTerminal(os.Stdin) {
		return nil
	}
	if f, ok := stderr.(*os.File); !ok || !isTerminal(f) {
		return nil
	}
	return &termAsker{in: bufio.NewReader(os.Stdin), out: stderr}
}

func (a *termAsker) Ask(ctx context.Context, q interp.Question) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	where := q.Step
	if q.Item != "" {
		where += "[" + q.Item + "]"
	}
	for {
		fmt.Fprintf(a.out, "\n%s: %s\n", where, q.Question)
		for i, o := range q.Options {
			def := ""
			if o == q.Default {
				def = " (default)"
			}
			fmt.Fprintf(a.out, "  %d) %s%s\n", i+1, o, def)
		}
		fmt.Fprint(a.out, "choice> ")
		line, err := a.in.ReadString('\n')
		if err != nil && line == "" {
			return "", fmt.Errorf("no answer to %q: %w", q.Question, err)
		}
		line = strings.TrimSpace(line)
		if line == "" && q.Default != "" {
			return q.Default, nil
		}
		if n, err := strconv.Atoi(line); err == nil && n >= 1 && n <= len(q.Options) {
			return q.Options[n-1], nil
		}
		for _, o := range q.Options {
			if o == line {
				return o, nil
			}
		}
		fmt.Fprintf(a.out, "%q is not one of the options.\n", line)
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
