package builtins

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"
)

// testGit runs the real git binary, isolated from the user's and the
// system's configuration, with a fixed identity.
var testGit = ExecGit{Env: []string{
	"GIT_CONFIG_GLOBAL=/dev/null",
	"GIT_CONFIG_NOSYSTEM=1",
	"GIT_AUTHOR_NAME=apl test", "GIT_AUTHOR_EMAIL=test@apl.invalid",
	"GIT_COMMITTER_NAME=apl test", "GIT_COMMITTER_EMAIL=test@apl.invalid",
}}

// recordingGit remembers every git command, so tests can check what the
// builtins ran as well as what they returned.
type recordingGit struct {
	mu    sync.Mutex
	calls [][]string
}

func (r *recordingGit) Run(ctx context.Context, dir string, args ...string) (string, error) {
	r.mu.Lock()
	r.calls = append(r.calls, args)
	r.mu.Unlock()
	return testGit.Run(ctx, dir, args...)
}

type repo struct {
	t   *testing.T
	dir string
	fn  Registry
	rec *recordingGit
}

// newRepo makes a repository on branch main with one commit per file
// content given, each writing its file and committing with its name as
// the subject.
func newRepo(t *testing.T, commits ...[2]string) *repo {
	t.Helper()
	rec := &recordingGit{}
	r := &repo{t: t, dir: t.TempDir(), rec: rec, fn: NewFuncs(FuncOptions{Git: rec})}
	r.git("init", "-q", "-b", "main")
	for _, c := range commits {
		r.commit(c[0], c[1])
	}
	return r
}

func (r *repo) git(args ...string) string {
	r.t.Helper()
	out, err := testGit.Run(context.Background(), r.dir, args...)
	if err != nil {
		r.t.Fatal(err)
	}
	return strings.TrimSpace(out)
}

// commit writes "path:content" pairs separated by spaces and commits them.
func (r *repo) commit(subject, files string) string {
	r.t.Helper()
	for _, pc := range strings.Fields(files) {
		p, c, _ := strings.Cut(pc, ":")
		writeFile(r.t, filepath.Join(r.dir, p), c+"\n")
	}
	r.git("add", "-A")
	r.git("commit", "-q", "--allow-empty", "-m", subject)
	return r.git("rev-parse", "HEAD")
}

func (r *repo) call(name string, attrs map[string]cty.Value) (cty.Value, error) {
	args := cty.EmptyObjectVal
	if len(attrs) > 0 {
		args = cty.ObjectVal(attrs)
	}
	return r.fn.Call(context.Background(), name, Env{Workdir: r.dir}, args)
}

func (r *repo) mustCall(name string, attrs map[string]cty.Value) cty.Value {
	r.t.Helper()
	v, err := r.call(name, attrs)
	if err != nil {
		r.t.Fatal(err)
	}
	return v
}

func TestGitHead(t *testing.T) {
	t.Parallel()
	r := newRepo(t, [2]string{"c1", "a:1"}, [2]string{"c2", "a:2"})
	head := r.git("rev-parse", "HEAD")
	got := r.mustCall("git.head", nil)
	want := cty.ObjectVal(map[string]cty.Value{"sha": str(head), "branch": str("main")})
	if !got.RawEquals(want) {
		t.Errorf("got %#v, want %#v", got, want)
	}

	r.git("checkout", "-q", "--detach", "HEAD~1")
	got = r.mustCall("git.head", nil)
	if got.GetAttr("branch").AsString() != "" || got.GetAttr("sha").AsString() != r.git("rev-parse", "HEAD~0") {
		t.Errorf("detached: got %#v", got)
	}

	t.Run("no commits", func(t *testing.T) {
		_, err := newRepo(t).call("git.head", nil)
		if err == nil || !strings.HasPrefix(err.Error(), "git.head: git rev-parse") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("not a repository", func(t *testing.T) {
		_, err := Funcs().Call(context.Background(), "git.head", Env{Workdir: t.TempDir()}, cty.EmptyObjectVal)
		var gerr *GitError
		if !errors.As(err, &gerr) || !strings.Contains(err.Error(), "not a git repository") {
			t.Errorf("err = %v, want a *GitError with git's message", err)
		}
	})
	t.Run("takes no arguments", func(t *testing.T) {
		_, err := r.call("git.head", map[string]cty.Value{"ref": str("x")})
		if err == nil || !strings.Contains(err.Error(), "takes no arguments") {
			t.Errorf("err = %v", err)
		}
	})
}

func TestGitStatus(t *testing.T) {
	t.Parallel()
	r := newRepo(t, [2]string{"c1", "a.txt:1 b.txt:1 old.txt:1"})
	clean := r.mustCall("git.status", nil)
	if !clean.GetAttr("clean").True() || clean.GetAttr("files").LengthInt() != 0 {
		t.Errorf("fresh repo: %#v", clean)
	}

	writeFile(t, filepath.Join(r.dir, "a.txt"), "changed\n")
	writeFile(t, filepath.Join(r.dir, "new dir", "n.txt"), "")
	writeFile(t, filepath.Join(r.dir, "staged.txt"), "")
	r.git("add", "staged.txt")
	r.git("mv", "old.txt", "renamed.txt")
	if err := os.Remove(filepath.Join(r.dir, "b.txt")); err != nil {
		t.Fatal(err)
	}
	got := r.mustCall("git.status", nil)
	if got.GetAttr("clean").True() {
		t.Error("clean = true with changes")
	}
	files := map[string]string{}
	for it := got.GetAttr("files").ElementIterator(); it.Next(); {
		_, f := it.Element()
		files[f.GetAttr("path").AsString()] = f.GetAttr("status").AsString()
	}
	want := map[string]string{
		"a.txt":         " M",
		"b.txt":         " D",
		"new dir/n.txt": "??",
		"staged.txt":    "A ",
		"renamed.txt":   "R ",
	}
	if diff := cmp.Diff(want, files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
}

func TestGitDiffStatLogAndRange(t *testing.T) {
	t.Parallel()
	r := newRepo(t, [2]string{"c1", "a:1"})
	c1 := r.git("rev-parse", "HEAD")
	c2 := r.commit("c2", "b:x c:y")
	c3 := r.commit("c3 subject with spaces", "a:changed")

	stat := func(attrs map[string]cty.Value) cty.Value { return r.mustCall("git.diff_stat", attrs) }
	diffTests := []struct {
		name  string
		attrs map[string]cty.Value
		want  [4]any
	}{
		{"checkpoint to HEAD", map[string]cty.Value{"from": str(c1)}, [4]any{" 3 files changed, 3 insertions(+), 1 deletion(-)", 3, 3, 1}},
		{"explicit to", map[string]cty.Value{"from": str(c1), "to": str(c2)}, [4]any{" 2 files changed, 2 insertions(+)", 2, 2, 0}},
		{"nothing", map[string]cty.Value{"from": str(c3)}, [4]any{"", 0, 0, 0}},
		{"working tree", nil, [4]any{"", 0, 0, 0}},
	}
	for _, tt := range diffTests {
		t.Run(tt.name, func(t *testing.T) {
			got := stat(tt.attrs)
			want := cty.ObjectVal(map[string]cty.Value{
				"summary":       str(strings.TrimSpace(tt.want[0].(string))),
				"files_changed": cty.NumberIntVal(int64(tt.want[1].(int))),
				"insertions":    cty.NumberIntVal(int64(tt.want[2].(int))),
				"deletions":     cty.NumberIntVal(int64(tt.want[3].(int))),
			})
			if !got.RawEquals(want) {
				t.Errorf("got %#v\nwant %#v", got, want)
			}
		})
	}
	writeFile(t, filepath.Join(r.dir, "a"), "changed\nmore\n")
	if got := stat(nil); got.GetAttr("summary").AsString() != "1 file changed, 1 insertion(+)" {
		t.Errorf("uncommitted change: %#v", got)
	}

	commits := func(v cty.Value) []string {
		var out []string
		for it := v.ElementIterator(); it.Next(); {
			_, c := it.Element()
			if c.Type().IsObjectType() {
				out = append(out, c.GetAttr("sha").AsString()[:7]+" "+c.GetAttr("subject").AsString())
			} else {
				out = append(out, c.AsString()[:7])
			}
		}
		return out
	}
	logTests := []struct {
		name  string
		attrs map[string]cty.Value
		want  []string
	}{
		{"all", nil, []string{c3[:7] + " c3 subject with spaces", c2[:7] + " c2", c1[:7] + " c1"}},
		{"max", map[string]cty.Value{"max": cty.NumberIntVal(1)}, []string{c3[:7] + " c3 subject with spaces"}},
		{"range", map[string]cty.Value{"range": str(c1 + "..HEAD")}, []string{c3[:7] + " c3 subject with spaces", c2[:7] + " c2"}},
		{"empty range", map[string]cty.Value{"range": str("HEAD..HEAD")}, nil},
	}
	for _, tt := range logTests {
		t.Run("log "+tt.name, func(t *testing.T) {
			got := r.mustCall("git.log", tt.attrs).GetAttr("commits")
			if diff := cmp.Diff(tt.want, commits(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}

	got := r.mustCall("git.commit_range", map[string]cty.Value{"from": str(c1)}).GetAttr("commits")
	if diff := cmp.Diff([]string{c2[:7], c3[:7]}, commits(got)); diff != "" {
		t.Errorf("commit_range oldest first (-want +got):\n%s", diff)
	}
	got = r.mustCall("git.commit_range", map[string]cty.Value{"from": str(c3)}).GetAttr("commits")
	if !got.RawEquals(cty.ListValEmpty(cty.String)) {
		t.Errorf("empty commit_range = %#v", got)
	}

	errTests := []struct {
		fn      string
		attrs   map[string]cty.Value
		wantErr string
	}{
		{"git.log", map[string]cty.Value{"max": cty.NumberIntVal(0)}, `git.log: argument "max" must be a whole number greater than zero, not 0`},
		{"git.log", map[string]cty.Value{"max": cty.NumberFloatVal(1.5)}, `argument "max" must be a whole number`},
		{"git.log", map[string]cty.Value{"range": str("--output=/tmp/x")}, `git.log: argument "range": "--output=/tmp/x" is not a revision`},
		{"git.log", map[string]cty.Value{"range": str("nosuchref")}, "git.log: git log"},
		{"git.diff_stat", map[string]cty.Value{"to": str("HEAD")}, `git.diff_stat: argument "to" needs "from"`},
		{"git.commit_range", nil, `git.commit_range: argument "from" is required`},
		{"git.commit_range", map[string]cty.Value{"from": str("-x")}, `argument "from": "-x" is not a revision`},
	}
	for _, tt := range errTests {
		t.Run(tt.wantErr, func(t *testing.T) {
			_, err := r.call(tt.fn, tt.attrs)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}
