package builtins

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"

	"github.com/zclconf/go-cty/cty"
)

// Git runs one git command in dir and returns its stdout. It is an
// interface so the git.* builtins can be tested against a fake, and so an
// embedding program can run git its own way.
type Git interface {
	Run(ctx context.Context, dir string, args ...string) (stdout string, err error)
}

// ExecGit runs the git binary. Its environment pins the C locale, because
// the builtins parse git's English summaries, and forbids prompts and
// editors, because nobody is there to answer them.
type ExecGit struct {
	// Path is the git binary; empty means "git" from PATH.
	Path string
	// Env holds extra KEY=VALUE pairs, for example an author identity.
	Env []string
}

// GitError is a git command that failed, with what it printed on stderr,
// which is usually the only useful explanation.
type GitError struct {
	// Args are git's arguments, without the program name.
	Args []string
	// ExitCode is git's exit status, -1 if it did not exit normally.
	ExitCode int
	// Stderr is everything git printed there.
	Stderr string
	// Err is the underlying error from os/exec.
	Err error
}

func (e *GitError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("git %s: %s", strings.Join(e.Args, " "), msg)
}

func (e *GitError) Unwrap() error { return e.Err }

// Run runs git with args in dir. A non-zero exit becomes a *GitError.
func (g ExecGit) Run(ctx context.Context, dir string, args ...string) (string, error) {
	bin := g.Path
	if bin == "" {
		bin = "git"
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "GIT_TERMINAL_PROMPT=0", "GIT_EDITOR=true", "GIT_PAGER=cat")
	cmd.Env = append(cmd.Env, g.Env...)
	// A hook that leaves a background process holding git's stdout must
	// not hang the run.
	cmd.WaitDelay = DefaultKillGrace
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), &GitError{Args: args, ExitCode: cmd.ProcessState.ExitCode(), Stderr: stderr.String(), Err: err}
	}
	return stdout.String(), nil
}

type gitFuncs struct{ git Git }

func (g gitFuncs) run(ctx context.Context, env Env, args ...string) (string, error) {
	if env.Workdir == "" {
		return "", errors.New("working directory is not set")
	}
	return g.git.Run(ctx, env.Workdir, args...)
}

// git.head {} → {sha, branch}; branch is "" on a detached HEAD.
func (g gitFuncs) head(ctx context.Context, env Env, _ args) (cty.Value, error) {
	sha, err := g.run(ctx, env, "rev-parse", "--verify", "HEAD")
	if err != nil {
		return cty.NilVal, err
	}
	branch, err := g.run(ctx, env, "symbolic-ref", "--quiet", "--short", "HEAD")
	var gerr *GitError
	if errors.As(err, &gerr) && gerr.ExitCode == 1 {
		branch, err = "", nil // detached
	}
	if err != nil {
		return cty.NilVal, err
	}
	return cty.ObjectVal(map[string]cty.Value{
		"sha":    cty.StringVal(strings.TrimSpace(sha)),
		"branch": cty.StringVal(strings.TrimSpace(branch)),
	}), nil
}

var statusFileType = cty.Object(map[string]cty.Type{"path": cty.String, "status": cty.String})

// git.status {} → {clean, files}. status is porcelain v1's two-letter XY
// code as git prints it (" M", "A ", "??"), which keeps staged and unstaged
// apart; untracked files are listed one by one, not as their directory.
func (g gitFuncs) status(ctx context.Context, env Env, _ args) (cty.Value, error) {
	out, err := g.run(ctx, env, "status", "--porcelain=v1", "-z", "--untracked-files=all")
	if err != nil {
		return cty.NilVal, err
	}
	var files []cty.Value
	entries := strings.Split(out, "\x00")
	for i := 0; i < len(entries); i++ {
		e := entries[i]
		if len(e) < 4 {
			continue
		}
		code := e[:2]
		if code[0] == 'R' || code[0] == 'C' {
			i++ // -z puts the original name of a rename or copy next
		}
		files = append(files, cty.ObjectVal(map[string]cty.Value{
			"path":   cty.StringVal(e[3:]),
			"status": cty.StringVal(code),
		}))
	}
	return cty.ObjectVal(map[string]cty.Value{
		"clean": cty.BoolVal(len(files) == 0),
		"files": objectList(statusFileType, files),
	}), nil
}

var (
	filesChangedRE = regexp.MustCompile(`(\d+) files? changed`)
	insertionsRE   = regexp.MustCompile(`(\d+) insertions?\(\+\)`)
	deletionsRE    = regexp.MustCompile(`(\d+) deletions?\(-\)`)
)

// git.diff_stat {from?, to?} → {summary, files_changed, insertions,
// deletions}. With from, it compares from with to (default HEAD): the
// protocols' `git diff --stat {checkpoint}..HEAD`. Without from, it compares
// HEAD with the working tree, staged or not; untracked files are not
// counted, as in git.
func (g gitFuncs) diffStat(ctx context.Context, env Env, a args) (cty.Value, error) {
	from, to, err := revArgs(a, false)
	if err != nil {
		return cty.NilVal, err
	}
	cmd := []string{"diff", "--shortstat", "--end-of-options", "HEAD", "--"}
	if from != "" {
		cmd = []string{"diff", "--shortstat", "--end-of-options", from, to, "--"}
	}
	out, err := g.run(ctx, env, cmd...)
	if err != nil {
		return cty.NilVal, err
	}
	summary := strings.TrimSpace(out)
	count := func(re *regexp.Regexp) cty.Value {
		n := 0
		if m := re.FindStringSubmatch(summary); m != nil {
			n, _ = strconv.Atoi(m[1])
		}
		return cty.NumberIntVal(int64(n))
	}
	return cty.ObjectVal(map[string]cty.Value{
		"summary":       cty.StringVal(summary),
		"files_changed": count(filesChangedRE),
		"insertions":    count(insertionsRE),
		"deletions":     count(deletionsRE),
	}), nil
}

var commitType = cty.Object(map[string]cty.Type{"sha": cty.String, "subject": cty.String})

// git.log {range?, max?} → {commits: [{sha, subject}]}, newest first as git
// prints them. range is anything `git log` accepts ("abc123..HEAD"); the
// default is HEAD's whole history.
func (g gitFuncs) log(ctx context.Context, env Env, a args) (cty.Value, error) {
	rng, _, err := a.str("range")
	if err != nil {
		return cty.NilVal, err
	}
	if err := checkRev("range", rng); err != nil {
		return cty.NilVal, err
	}
	max, err := a.positiveInt("max")
	if err != nil {
		return cty.NilVal, err
	}
	cmd := []string{"log", "--format=%H%x00%s"}
	if max > 0 {
		cmd = append(cmd, "-n", strconv.Itoa(max))
	}
	if rng != "" {
		cmd = append(cmd, "--end-of-options", rng)
	}
	out, err := g.run(ctx, env, append(cmd, "--")...)
	if err != nil {
		return cty.NilVal, err
	}
	var commits []cty.Value
	for _, line := range strings.Split(out, "\n") {
		sha, subject, ok := strings.Cut(line, "\x00")
		if !ok {
			continue
		}
		commits = append(commits, cty.ObjectVal(map[string]cty.Value{
			"sha":     cty.StringVal(sha),
			"subject": cty.StringVal(subject),
		}))
	}
	return cty.ObjectVal(map[string]cty.Value{"commits": objectList(commitType, commits)}), nil
}

// git.commit_range {from, to?} → {commits: [sha]}, oldest first: the
// commits reachable from to (default HEAD) and not from from.
func (g gitFuncs) commitRange(ctx context.Context, env Env, a args) (cty.Value, error) {
	from, to, err := revArgs(a, true)
	if err != nil {
		return cty.NilVal, err
	}
	shas, err := g.revList(ctx, env, from, to)
	if err != nil {
		return cty.NilVal, err
	}
	return cty.ObjectVal(map[string]cty.Value{"commits": stringList(shas)}), nil
}

func (g gitFuncs) revList(ctx context.Context, env Env, from, to string) ([]string, error) {
	out, err := g.run(ctx, env, "rev-list", "--reverse", "--end-of-options", from+".."+to, "--")
	if err != nil {
		return nil, err
	}
	return strings.Fields(out), nil
}

// revArgs reads the from/to pair most git builtins take; to defaults to
// HEAD once from is given.
func revArgs(a args, fromRequired bool) (from, to string, err error) {
	if fromRequired {
		from, err = a.required("from")
	} else {
		from, _, err = a.str("from")
	}
	if err != nil {
		return "", "", err
	}
	to, hasTo, err := a.str("to")
	if err != nil {
		return "", "", err
	}
	if hasTo && from == "" {
		return "", "", errors.New(`argument "to" needs "from"`)
	}
	if to == "" {
		to = "HEAD"
	}
	if err := checkRev("from", from); err != nil {
		return "", "", err
	}
	return from, to, checkRev("to", to)
}

// checkRev refuses revisions git would read as options. --end-of-options
// already stops that; the check gives the playbook author a clear message
// instead of "bad revision".
func checkRev(name, rev string) error {
	if strings.HasPrefix(rev, "-") {
		return fmt.Errorf("argument %q: %q is not a revision (it starts with \"-\")", name, rev)
	}
	return nil
}
