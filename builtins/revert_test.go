package builtins

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"
)

func revertArgs(from, branch string) map[string]cty.Value {
	return map[string]cty.Value{
		"from":    str(from),
		"branch":  str(branch),
		"message": str("rollback: revert to phase 3 checkpoint"),
	}
}

func TestGitRevert(t *testing.T) {
	t.Parallel()
	r := newRepo(t, [2]string{"c1", "a:1"})
	checkpoint := r.git("rev-parse", "HEAD")
	c2 := r.commit("c2", "b:new a:2")
	c3 := r.commit("c3", "c:new")
	writeFile(t, filepath.Join(r.dir, "untracked"), "kept")

	got := r.mustCall("git.revert", revertArgs(checkpoint, "autopilot-diagnostic-phase-3"))

	head := r.git("rev-parse", "HEAD")
	want := cty.ObjectVal(map[string]cty.Value{
		"branch":   str("autopilot-diagnostic-phase-3"),
		"reverted": cty.ListVal([]cty.Value{str(c2), str(c3)}),
		"commit":   str(head),
	})
	if !got.RawEquals(want) {
		t.Errorf("got %#v\nwant %#v", got, want)
	}
	if b := r.git("rev-parse", "autopilot-diagnostic-phase-3"); b != c3 {
		t.Errorf("diagnostic branch at %s, want the old HEAD %s", b, c3)
	}
	if parent := r.git("rev-parse", "HEAD~1"); parent != c3 {
		t.Errorf("rollback commit's parent is %s, want %s: history must be kept", parent, c3)
	}
	if subj := r.git("log", "-1", "--format=%s"); subj != "rollback: revert to phase 3 checkpoint" {
		t.Errorf("subject = %q", subj)
	}
	if d := r.git("diff", "--stat", checkpoint, "HEAD"); d != "" {
		t.Errorf("the tree differs from the checkpoint:\n%s", d)
	}
	if s := readString(t, filepath.Join(r.dir, "untracked")); s != "kept" {
		t.Errorf("untracked file changed to %q", s)
	}
	if st := r.git("status", "--porcelain", "--untracked-files=no"); st != "" {
		t.Errorf("working tree not clean after the rollback:\n%s", st)
	}
	for _, c := range r.rec.calls {
		if slices.Contains(c, "reset") {
			t.Errorf("git.revert ran git %s", strings.Join(c, " "))
		}
	}
}

func TestGitRevertNothingToRevert(t *testing.T) {
	t.Parallel()
	r := newRepo(t, [2]string{"c1", "a:1"})
	head := r.git("rev-parse", "HEAD")
	got := r.mustCall("git.revert", revertArgs(head, "diag"))
	want := cty.ObjectVal(map[string]cty.Value{
		"branch":   str("diag"),
		"reverted": cty.ListValEmpty(cty.String),
		"commit":   str(head),
	})
	if !got.RawEquals(want) {
		t.Errorf("got %#v\nwant %#v", got, want)
	}
	if r.git("rev-parse", "HEAD") != head {
		t.Error("HEAD moved")
	}
}

// A failed rollback must leave the repository exactly as it was: same
// HEAD, clean tree, no revert in progress and no diagnostic branch.
func TestGitRevertFailureLeavesRepoAsItWas(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		setup   func(r *repo) (from, to string)
		wantErr string
	}{
		{
			name: "conflict",
			setup: func(r *repo) (string, string) {
				c1 := r.git("rev-parse", "HEAD")
				c2 := r.commit("c2", "a:two")
				r.commit("c3", "a:three")
				return c1, c2 // undoing c2 alone conflicts with c3
			},
			wantErr: "conflicts in a: git revert --no-commit --end-of-options",
		},
		{
			name: "merge commit",
			setup: func(r *repo) (string, string) {
				c1 := r.git("rev-parse", "HEAD")
				r.git("checkout", "-q", "-b", "side")
				r.commit("side", "s:1")
				r.git("checkout", "-q", "main")
				r.commit("main", "m:1")
				r.git("merge", "-q", "--no-edit", "side")
				return c1, "HEAD"
			},
			wantErr: "is a merge but no -m option was given",
		},
		{
			name: "commit refused by hook",
			setup: func(r *repo) (string, string) {
				c1 := r.git("rev-parse", "HEAD")
				r.commit("c2", "b:1")
				hook := filepath.Join(r.dir, ".git", "hooks", "pre-commit")
				writeFile(r.t, hook, "#!/bin/sh\necho hook says no >&2\nexit 1")
				if err := os.Chmod(hook, 0o755); err != nil {
					r.t.Fatal(err)
				}
				return c1, "HEAD"
			},
			wantErr: "committing the rollback: git commit --allow-empty -m rollback: revert to phase 3 checkpoint: hook says no",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t, [2]string{"c1", "a:one"})
			from, to := tt.setup(r)
			before := r.git("rev-parse", "HEAD")
			args := revertArgs(from, "diag")
			args["to"] = str(to)
			_, err := r.call("git.revert", args)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), `the revert was aborted and the branch "diag" removed`) {
				t.Errorf("err does not say the repository was restored: %v", err)
			}
			if after := r.git("rev-parse", "HEAD"); after != before {
				t.Errorf("HEAD moved from %s to %s", before, after)
			}
			if st := r.git("status", "--porcelain"); st != "" {
				t.Errorf("working tree not clean:\n%s", st)
			}
			if _, err := os.Stat(filepath.Join(r.dir, ".git", "REVERT_HEAD")); !os.IsNotExist(err) {
				t.Errorf("a revert is still in progress (stat: %v)", err)
			}
			if branches := r.git("branch", "--list", "diag"); branches != "" {
				t.Errorf("diagnostic branch left behind: %q", branches)
			}
		})
	}
}

func TestGitRevertRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		prepare func(r *repo)
		args    map[string]cty.Value
		wantErr string
	}{
		{name: "dirty tree", prepare: func(r *repo) { writeFile(r.t, filepath.Join(r.dir, "a"), "edited\n") }, wantErr: "uncommitted changes to tracked files"},
		{name: "staged change", prepare: func(r *repo) { writeFile(r.t, filepath.Join(r.dir, "s"), ""); r.git("add", "s") }, wantErr: "uncommitted changes to tracked files"},
		{name: "branch exists", prepare: func(r *repo) { r.git("branch", "diag") }, wantErr: "creating the diagnostic branch: git branch --end-of-options diag: fatal: a branch named 'diag' already exists"},
		{name: "option as branch", args: map[string]cty.Value{"branch": str("-D")}, wantErr: `git.revert: argument "branch": "-D" is not a revision`},
		{name: "bad branch name", args: map[string]cty.Value{"branch": str("a..b")}, wantErr: "not a valid branch name"},
		{name: "no message", args: map[string]cty.Value{"message": str("")}, wantErr: `git.revert: argument "message" is required`},
		{name: "no branch", args: map[string]cty.Value{"branch": cty.NullVal(cty.String)}, wantErr: `git.revert: argument "branch" is required`},
		{name: "unknown from", args: map[string]cty.Value{"from": str("nosuchsha")}, wantErr: "git.revert: git rev-list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t, [2]string{"c1", "a:1"})
			from := r.git("rev-parse", "HEAD")
			r.commit("c2", "b:1")
			if tt.prepare != nil {
				tt.prepare(r)
			}
			before := r.git("rev-parse", "HEAD")
			branchesBefore := r.git("branch", "--list")
			args := revertArgs(from, "diag")
			for k, v := range tt.args {
				args[k] = v
			}
			_, err := r.call("git.revert", args)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
			}
			if diff := cmp.Diff(before+"\n"+branchesBefore, r.git("rev-parse", "HEAD")+"\n"+r.git("branch", "--list")); diff != "" {
				t.Errorf("a refused revert changed HEAD or branches (-before +after):\n%s", diff)
			}
		})
	}
}
