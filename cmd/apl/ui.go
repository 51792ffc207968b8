package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/cmd/internal/ui"
	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/interp/draw"
	"github.com/apl-lang/apl/lang"
	"github.com/zclconf/go-cty/cty"
)

// uiCmd serves the runs of the project as a web page.
type uiCmd struct {
	Listen  string `default:"127.0.0.1:0" placeholder:"ADDR" help:"Listen on ADDR (host:port; port 0 picks a free one)."`
	Expose  bool   `help:"Allow --listen on an address other than loopback: anyone who can reach it and has the printed URL can read every run of the project (prompts, answers, outputs) and answer its questions."`
	Open    bool   `help:"Open the page in the browser."`
	RunsDir string `help:"Where run directories are (default: .apl/runs)." placeholder:"DIR"`

	// With --engine temporal the page shows the namespace's runs, as apl
	// runs --engine temporal lists them, beside the project's.
	temporalFlags `embed:""`
}

func (c *uiCmd) Run(e *env) error {
	host, _, err := net.SplitHostPort(c.Listen)
	if err != nil {
		return exitWith(exitUsage, fmt.Errorf("--listen %s: want HOST:PORT, as 127.0.0.1:8080", c.Listen))
	}
	loopback := host == "localhost"
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		loopback = true
	}
	if !loopback && !c.Expose {
		return exitWith(exitUsage, fmt.Errorf("--listen %s is not a loopback address: anyone who can reach it and has the URL could read every run of this project (prompts, answers, outputs) and answer its questions; add --expose to mean it", c.Listen))
	}
	runsDir := c.RunsDir
	if runsDir == "" {
		// A checkout may hold a planted .apl symlink: read runs only
		// inside the project, as runs write them.
		if runsDir, err = builtins.ConfinedDir(".", interp.RunsDir(".")); err != nil {
			return exitWith(exitUsage, err)
		}
	}
	ln, err := net.Listen("tcp", c.Listen)
	if err != nil {
		return exitWith(exitUsage, fmt.Errorf("--listen: %w", err))
	}
	var hosts []string
	if !loopback && host != "" {
		hosts = append(hosts, host)
	}
	opts := e.uiOptions(runsDir, hosts)
	what := relPath(runsDir)
	opts.Where = what
	if c.Engine == engineTemporal {
		closeRuns, err := e.uiTemporal(c.temporalFlags, &opts)
		if err != nil {
			ln.Close()
			return err
		}
		defer closeRuns()
		what = opts.Where
	}
	srv := ui.New(opts)
	url := fmt.Sprintf("http://%s/?token=%s", displayAddr(ln.Addr().String()), srv.Token())
	if !loopback {
		fmt.Fprintf(e.stderr, "apl ui: listening on %s: whoever reaches it with this URL can read every run in %s and answer its questions\n", ln.Addr(), what)
	}
	fmt.Fprintf(e.stdout, "apl ui: %s\n", url)
	if c.Open {
		if err := openBrowser(url); err != nil {
			fmt.Fprintf(e.stderr, "apl ui: could not open a browser (%v); open the URL above\n", err)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		hs.Shutdown(sctx)
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return exitWith(exitInternal, err)
	}
	return nil
}

// displayAddr is a listening address as a URL's host: 127.0.0.1:PORT.
func displayAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// uiLoadMu makes the ui's loads of playbooks one at a time: its pages are
// served at once, and a Loader is not safe for concurrent use.
var uiLoadMu sync.Mutex

// uiOptions wires the ui to apl's own ways of loading playbooks, dry
// runs, plans and resuming.
func (e *env) uiOptions(runsDir string, hosts []string) ui.Options {
	mu := &uiLoadMu
	load := func(ref string) (*lang.Playbook, error) {
		mu.Lock()
		defer mu.Unlock()
		pb, diags := e.loader.Load(ref)
		if diags.HasErrors() {
			return nil, fmt.Errorf("%s: %s", ref, diags.Error())
		}
		return pb, nil
	}
	return ui.Options{
		Runs:   ui.Local{Dir: runsDir},
		Load:   load,
		Hosts:  hosts,
		Answer: e.uiAnswer(runsDir),
		DryRun: func(pb *lang.Playbook, ref string, inputs []string, mocks string) (*draw.Run, error) {
			mu.Lock()
			defer mu.Unlock()
			given := map[string]cty.Value{}
			for _, kv := range inputs {
				name, raw, ok := strings.Cut(kv, "=")
				in := pb.Input(strings.TrimSpace(name))
				if !ok || in == nil {
					var names []string
					for _, in := range pb.Inputs {
						names = append(names, in.Name)
					}
					return nil, fmt.Errorf("input %q: want NAME=VALUE with NAME an input of %s: %s", kv, pb.Name, strings.Join(names, ", "))
				}
				v, err := parseInput(in, raw)
				if err != nil {
					return nil, fmt.Errorf("input %s: %v", in.Name, err)
				}
				given[in.Name] = v
			}
			mockMap, testInputs, mode, err := e.dryMocks(pb, dryMockFlags{Mocks: mocks})
			if err != nil {
				return nil, err
			}
			for k, v := range testInputs {
				if _, ok := given[k]; !ok {
					given[k] = v
				}
			}
			w, err := walkDry(pb, ref, interp.Options{Inputs: requiredExamples(pb, given), Mode: mode}, mockMap, nil, nil)
			if err != nil {
				return nil, err
			}
			return w.path(), nil
		},
		Plan: func(pb *lang.Playbook) map[string]string {
			p := lang.ComputePlan(pb, planOptions(0, 0))
			out := map[string]string{}
			for _, s := range p.Steps {
				out[s.Name] = fmt.Sprintf("visits %s · agent calls %s · tokens %s · cost %s · time %s",
					count(s.Visits), count(s.Total.Calls), count(s.Total.Tokens), cost(s.Total.CostUSD), seconds(s.Total.Seconds))
			}
			return out
		},
	}
}

// uiAnswer answers a waiting run from the page as a person at the
// terminal would: it starts apl resume --answer KEY=ANSWER
// --non-interactive RUN as a process of its own, in a session of its own
// (so its own process group, away from the ui's terminal), its output
// appended to the run directory's resume.log. The answer takes the same
// path, with the same checks, as at the terminal, and the run goes on
// whatever becomes of the ui: closed, stopped with Ctrl-C, its terminal
// gone. It returns once the run took the answer (it no longer waits
// there) or resume ended refusing it; the page then follows the run as
// any other.
func (e *env) uiAnswer(runsDir string) func(ctx context.Context, id, key, answer string) error {
	return func(ctx context.Context, id, key, answer string) error {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("resume: this apl's path: %w", err)
		}
		runs := ui.Local{Dir: runsDir}
		run, err := runs.Open(id) // the id names a run of runsDir
		if err != nil {
			return err
		}
		logPath := filepath.Join(run.Dir, uiResumeLog)
		logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("resume: %w", err)
		}
		defer logf.Close()
		start, _ := logf.Seek(0, io.SeekEnd)
		fmt.Fprintf(logf, "apl ui %s: apl resume %s --answer %s=…\n", time.Now().Format(time.RFC3339), id, key)
		cmd := exec.Command(exe, "resume", "--non-interactive", "--runs-dir", runsDir, "--answer", key+"="+answer, id)
		cmd.Args[0] = "apl"
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("resume: %w", err)
		}
		done := make(chan int, 1)
		go func() {
			cmd.Wait() // reaped here while the ui runs; by init after
			done <- cmd.ProcessState.ExitCode()
		}()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case code := <-done:
				if code != exitOK && code != exitWaiting && code != exitFailed {
					out, _ := os.ReadFile(logPath)
					if int(start) <= len(out) {
						out = out[start:]
					}
					_, msg, _ := strings.Cut(string(out), "\n")
					return fmt.Errorf("resume: %s", strings.TrimSpace(msg))
				}
				return nil
			case <-tick.C:
				if r, err := runs.Open(id); err == nil && (r.Status != interp.StatusWaiting || r.Waiting == nil || r.Waiting.Key() != key) {
					return nil
				}
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
}

// uiResumeLog is the file of a run directory where the apl resume that
// apl ui starts writes what it prints.
const uiResumeLog = "resume.log"

// openBrowser opens url in the desktop's browser.
func openBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	return cmd.Start()
}
