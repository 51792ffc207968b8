package lang

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/hashicorp/hcl/v2"
)

// markRepo makes dir the top of a git repository, as far as finding a
// playbook's project goes, and returns it.
func markRepo(t testing.TB, dir string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// secret is what the file outside the project holds. It is not HCL, so
// that a playbook that read it would quote it in a diagnostic's snippet.
const secret = "root:x:0:0:TOPSECRET-7f3a:/root:/bin/bash\n"

// hostile is a repository holding a playbook directory pb, with symlinks
// planted in pb that lead out of the repository to the directory outside,
// which holds a secret.
type hostile struct {
	top, repo, pb, outside string
}

func newHostile(t testing.TB) *hostile {
	t.Helper()
	top, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h := &hostile{top: top, repo: filepath.Join(top, "repo"), outside: filepath.Join(top, "outside")}
	h.pb = filepath.Join(h.repo, "pb")
	markRepo(t, h.repo)
	writeTree(t, h.outside, map[string]string{
		"secret.hcl":      secret,
		"secret.md":       secret,
		"dir/main.hcl":    secret,
		"ok/main.hcl":     "playbook \"ok\" {}\nstep \"s\" {\n  shell { command = [\"true\"] }\n}\n",
		"ok/prompts/p.md": "Shared prompt.\n",
	})
	writeTree(t, h.repo, map[string]string{
		"base/main.hcl":     "playbook \"base\" {}\nstep \"s\" {\n  shell { command = [\"true\"] }\n}\n",
		"common/p.md":       "A prompt shared in the repository.\n",
		"pb/prompts/own.md": "Own prompt.\n",
	})
	for link, target := range map[string]string{
		"file-link.hcl":    filepath.Join(h.outside, "secret.hcl"),
		"rel-link.hcl":     "../../outside/secret.hcl",
		"secret.md":        filepath.Join(h.outside, "secret.md"),
		"dir-link":         h.outside,
		"loop.hcl":         "loop.hcl",
		"loop-a":           "loop-b",
		"loop-b":           "loop-a",
		"dangling.hcl":     filepath.Join(h.outside, "missing.hcl"),
		"prompts/in.md":    "../../common/p.md",
		"up-link/main.hcl": "../../base/main.hcl",
	} {
		p := filepath.Join(h.pb, link)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Skipf("no symlinks here: %v", err)
		}
	}
	return h
}

// The three ways a playbook names a file to read, each with %s for the
// quoted path and the line the path is on.
var pathForms = []struct {
	name, src string
	line      int
}{
	{"extends", "extends = %s\nplaybook \"x\" {}\n", 1},
	{"source", "playbook \"x\" {}\nstep \"s\" {\n  playbook { source = %s }\n}\n", 3},
	{"file", "playbook \"x\" {}\nprompt \"p\" {\n  template = file(%s)\n}\n", 3},
}

// load loads a playbook of one file, main.hcl in h.pb, whose text is form
// with the path p quoted into it.
func (h *hostile) load(ld *Loader, form string, p string) (*Playbook, hcl.Diagnostics) {
	name := filepath.Join(h.pb, "main.hcl")
	return ld.LoadSources(map[string][]byte{name: []byte(fmt.Sprintf(form, hclQuote(p)))}, h.pb)
}

// checkNothingOutside fails t if the load read a file outside the
// repository, or shows the secret anywhere: in a source, in a
// diagnostic, or in a diagnostic's snippet as apl validate prints it.
func (h *hostile) checkNothingOutside(t *testing.T, pb *Playbook, diags hcl.Diagnostics) {
	t.Helper()
	for name, src := range pb.Sources {
		if strings.HasPrefix(name, StdlibPrefix) {
			continue
		}
		abs, _ := filepath.Abs(name)
		if !within(abs, h.repo) {
			t.Errorf("the load read %s, outside the repository", name)
		}
		if bytes.Contains(src, []byte("TOPSECRET")) {
			t.Errorf("source %s holds the secret", name)
		}
	}
	var out bytes.Buffer
	hcl.NewDiagnosticTextWriter(&out, pb.Files(), 100, false).WriteDiagnostics(diags)
	if strings.Contains(out.String(), "TOPSECRET") {
		t.Errorf("the diagnostics quote the secret:\n%s", out.String())
	}
}

// TestHostilePathsRefused names files outside the project every way a
// playbook can, and checks that each is refused with a diagnostic at the
// path, and that nothing of the file outside is read or shown.
func TestHostilePathsRefused(t *testing.T) {
	h := newHostile(t)
	for _, tt := range []struct {
		path string
		// refused: apl refuses the path itself ("Path not allowed"); else
		// the file cannot be read, which is reported as such.
		refused bool
	}{
		{"../../outside/secret.hcl", true},
		{"../..", true},
		{"../../outside/dir", true},
		{filepath.Join(h.outside, "secret.hcl"), true},
		{"/etc/passwd", true},
		{"/", true},
		{"file-link.hcl", true},
		{"rel-link.hcl", true},
		{"secret.md", true},
		{"dir-link", true},
		{"dir-link/secret.hcl", true},
		{"dir-link/dir", true},
		{"loop.hcl", true},
		{"loop-a", true},
		{`..\..\outside\secret.hcl`, true},
		{`C:\outside\secret.hcl`, true},
		{"C:/outside/secret.hcl", true},
		{"c:secret.hcl", true},
		{`\\server\share\secret.hcl`, true},
		{"//server/share/secret.hcl", true},
		{"a\x00b", true},
		{"prompts/../../../outside/secret.md", true},
		{"dangling.hcl", false},
	} {
		for _, form := range pathForms {
			t.Run(form.name+"/"+tt.path, func(t *testing.T) {
				pb, diags := h.load(&Loader{}, form.src, tt.path)
				h.checkNothingOutside(t, pb, diags)
				var at *hcl.Diagnostic
				for _, d := range diags {
					if d.Severity == hcl.DiagError && d.Subject != nil && d.Subject.Start.Line == form.line {
						at = d
					}
				}
				if at == nil {
					t.Fatalf("no error at line %d: %v", form.line, diags)
				}
				if filepath.Base(at.Subject.Filename) != "main.hcl" {
					t.Errorf("the error points into %s, want main.hcl", at.Subject.Filename)
				}
				if tt.refused && at.Summary != "Path not allowed" {
					t.Errorf("summary %q, want Path not allowed: %s", at.Summary, at)
				}
			})
		}
	}
}

// TestExtendsPasswdQuotesNothing is the report that started this: a
// playbook extending ../../../../../etc/passwd made apl validate print its
// first lines as the snippets of its parse errors.
func TestExtendsPasswdQuotesNothing(t *testing.T) {
	h := newHostile(t)
	// Enough ../ to reach / from anywhere under the temporary directory.
	up := strings.Repeat("../", strings.Count(h.pb, string(filepath.Separator)))
	pb, diags := h.load(&Loader{}, pathForms[0].src, up+"etc/passwd")
	h.checkNothingOutside(t, pb, diags)
	for name := range pb.Sources {
		if strings.Contains(name, "passwd") {
			t.Errorf("the load read %s", name)
		}
	}
	if !hasSummary(diags, "Path not allowed") {
		t.Errorf("want Path not allowed, got %v", diags)
	}
}

// TestPathsInsideLoad checks that what stays in the project still loads:
// ../ inside the repository, symlinks that stay in it, and the stdlib.
func TestPathsInsideLoad(t *testing.T) {
	h := newHostile(t)
	stdlib := fstest.MapFS{"base/main.hcl": {Data: []byte("playbook \"base\" {}\nstep \"s\" {\n  shell { command = [\"true\"] }\n}\n")}}
	for _, tt := range []struct {
		form int
		path string
	}{
		{0, "../base"},
		{0, "../base/main.hcl"},
		{0, filepath.Join(h.repo, "base")},
		{0, "up-link/main.hcl"},
		{0, "stdlib:base"},
		{1, "../base"},
		{1, "up-link/main.hcl"},
		{1, "stdlib:base"},
		{2, "prompts/own.md"},
		{2, "prompts/in.md"},
	} {
		form := pathForms[tt.form]
		t.Run(form.name+"/"+tt.path, func(t *testing.T) {
			pb, diags := h.load(&Loader{Stdlib: stdlib}, form.src, tt.path)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			h.checkNothingOutside(t, pb, diags)
		})
	}
}

// TestAllowedDirectoryLoads checks that a directory the user allows is
// read like the project, and nothing beside it.
func TestAllowedDirectoryLoads(t *testing.T) {
	h := newHostile(t)
	allowed := filepath.Join(h.outside, "ok")
	ld := &Loader{Allow: []string{allowed}}
	for _, tt := range []struct {
		form int
		path string
	}{
		{0, "../../outside/ok"},
		{0, filepath.Join(allowed, "main.hcl")},
		{1, "../../outside/ok"},
	} {
		form := pathForms[tt.form]
		t.Run(form.name+"/"+tt.path, func(t *testing.T) {
			if _, diags := h.load(ld, form.src, tt.path); diags.HasErrors() {
				t.Fatal(diags)
			}
		})
	}
	// Root sets the project itself, for a program that knows it (an
	// editor's workspace).
	if _, diags := h.load(&Loader{Root: h.top}, pathForms[0].src, "../../outside/ok"); diags.HasErrors() {
		t.Errorf("with Root above the repository: %v", diags)
	}
	pb, diags := h.load(ld, pathForms[0].src, "../../outside/secret.hcl")
	if !hasSummary(diags, "Path not allowed") {
		t.Errorf("a file beside the allowed directory: %v", diags)
	}
	h.checkNothingOutside(t, pb, diags)
}

// TestLoadRefusesPlantedPlaybookFiles checks the playbook's own files: a
// playbook file that is a symlink out of the repository, given by name
// or found in the playbook's directory, and a test file that is one.
func TestLoadRefusesPlantedPlaybookFiles(t *testing.T) {
	h := newHostile(t)
	writeTree(t, filepath.Join(h.repo, "dirpb"), map[string]string{"main.hcl": "playbook \"d\" {}\n"})
	if err := os.Symlink(filepath.Join(h.outside, "secret.hcl"), filepath.Join(h.repo, "dirpb", "evil.hcl")); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{filepath.Join(h.pb, "file-link.hcl"), filepath.Join(h.repo, "dirpb")} {
		pb, diags := (&Loader{}).Load(ref)
		if !diags.HasErrors() || !strings.Contains(diags[0].Detail, "leads outside the project") {
			t.Errorf("Load(%s): %v", ref, diags)
		}
		h.checkNothingOutside(t, pb, diags)
	}

	writeTree(t, filepath.Join(h.repo, "tested"), map[string]string{"main.hcl": "playbook \"t\" {}\n"})
	if err := os.Symlink(filepath.Join(h.outside, "secret.hcl"), filepath.Join(h.repo, "tested", "main_test.hcl")); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{filepath.Join(h.repo, "tested"), filepath.Join(h.repo, "tested", "main.hcl")} {
		files, err := (&Loader{}).TestFiles(ref)
		if err == nil || !strings.Contains(err.Error(), "leads outside the project") || len(files) > 0 {
			t.Errorf("TestFiles(%s) = %d files, %v; want the planted test file refused", ref, len(files), err)
		}
	}
}

// TestFindProject checks where a playbook's project is: the top of the
// git repository it is in (git init's, or a worktree's .git file), else
// the directory given.
func TestFindProject(t *testing.T) {
	top, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeTree(t, top, map[string]string{
		"repo/a/b/main.hcl":      "playbook \"m\" {}\n",
		"plain/a/b/main.hcl":     "playbook \"m\" {}\n",
		"worktree/.git":          "gitdir: /somewhere/else\n",
		"worktree/a/main.hcl":    "playbook \"m\" {}\n",
		"repo/base.hcl":          "playbook \"base\" {}\n",
		"repo/a/b/fork/main.hcl": "extends = \"../../../base.hcl\"\n",
	})
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	if out, err := exec.Command("git", "init", "-q", filepath.Join(top, "repo")).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	for _, tt := range []struct{ ref, root string }{
		{"repo/a/b/main.hcl", "repo"},
		{"repo/a/b", "repo"},
		{"repo", "repo"},
		{"plain/a/b/main.hcl", "plain/a/b"},
		{"plain/a/b", "plain/a/b"},
		{"worktree/a/main.hcl", "worktree"},
	} {
		if got := FindProject(filepath.Join(top, tt.ref), nil).Root; got != filepath.Join(top, tt.root) {
			t.Errorf("FindProject(%s).Root = %s, want %s", tt.ref, got, filepath.Join(top, tt.root))
		}
	}
	// The fork reaches the repository's top from three levels down: in
	// the repository that is inside; the same tree without .git is not.
	if _, diags := Load(filepath.Join(top, "repo/a/b/fork")); diags.HasErrors() {
		t.Errorf("inside the repository: %v", diags)
	}
	if err := os.RemoveAll(filepath.Join(top, "repo", ".git")); err != nil {
		t.Fatal(err)
	}
	if _, diags := Load(filepath.Join(top, "repo/a/b/fork")); !hasSummary(diags, "Path not allowed") {
		t.Errorf("outside a repository, ../../../ leaves the directory given: %v", diags)
	}
}

// FuzzPlaybookPath names arbitrary paths in extends, a sub-playbook's
// source and file(), from a playbook in a repository with symlinks planted
// out of it: loading must never panic, every diagnostic must be located,
// and nothing outside the repository may be read or shown.
func FuzzPlaybookPath(f *testing.F) {
	h := newHostile(f)
	for _, p := range []string{
		"../../outside/secret.hcl", "/etc/passwd", "file-link.hcl", "dir-link/secret.hcl", "loop-a",
		`..\..\outside\secret.hcl`, `C:\x`, "a\x00b", "../base", "prompts/in.md", "stdlib:x", "",
		".", "..", "./../pb/../../outside", "dangling.hcl", "up-link/main.hcl",
	} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		for _, form := range pathForms {
			pb, diags := h.load(&Loader{}, form.src, p)
			checkDiagnostics(t, pb, diags)
			h.checkNothingOutside(t, pb, diags)
		}
	})
}

// hasSummary reports whether diags hold an error with that summary.
func hasSummary(diags hcl.Diagnostics, summary string) bool {
	for _, d := range diags {
		if d.Severity == hcl.DiagError && d.Summary == summary {
			return true
		}
	}
	return false
}
