//go:build !race

package temporal

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apl-lang/apl/interp"
	"go.temporal.io/sdk/client"
)

// A playbook loaded from files runs a sub-playbook from its files
// (./child, with a prompt file) once and per item, as child workflows:
// the run ends as locally, the sub-runs' steps are in its path, and the
// tokens they spent count toward its cap (the last sub-run's call, which
// may use as much as the others did, does not fit in what is left). The worker has no copy of the files: they travel with the run.
func TestSubPlaybookSameAsLocal(t *testing.T) {
	c := server(t)
	startWorker(t, c, "sub", t.TempDir())
	dir := filepath.Join(t.TempDir(), "sub")
	if err := os.CopyFS(dir, os.DirFS("testdata/sub")); err != nil {
		t.Fatal(err)
	}
	ref := filepath.Join(dir, "main.hcl")
	pb, diags := loader().Load(ref)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	opts := interp.Options{RunID: "sub-run"}
	local := runLocal(t, pb, ref, opts)
	// Run, without the files once the run's input holds them.
	in, err := Input(pb, ref, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: in.RunID, TaskQueue: "sub"}, WorkflowName, in)
	if err != nil {
		t.Fatal(err)
	}
	var out RunOutput
	if err := run.Get(ctx, &out); err != nil {
		t.Fatal(err)
	}
	remote := ran{out.Status, out.Recommendation, string(out.OutputJSON), normal(out.Path)}
	sameRuns(t, ref, local, remote)
	if remote.status != interp.StatusFailed || !strings.Contains(remote.output, `"tokens":180`) {
		t.Errorf("the sub-runs' tokens did not reach the cap: %s %s", remote.status, remote.output)
	}
	if !slices.Contains(remote.path, "run/say step_completed") || !slices.Contains(remote.path, "over step_failed") {
		t.Errorf("the sub-runs' steps are not in the path: %q", remote.path)
	}
}

// A playbook's documents are written on the worker, in its project
// directory, as a local run writes them in its own: the same files
// (backups and archive included) with the same contents.
func TestDocumentsSameAsLocal(t *testing.T) {
	c := server(t)
	worker := t.TempDir()
	startWorker(t, c, "docs", worker)
	ref := "testdata/document.hcl"
	pb, diags := loader().Load(ref)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	local := t.TempDir()
	sameAsLocal(t, c, "docs", pb, ref, interp.Options{Workdir: local})
	sameFiles(t, local, worker, "out")
	if _, err := os.Stat(filepath.Join(worker, "out", "archive", "state.json")); err != nil {
		t.Errorf("no archive on the worker: %v", err)
	}
}

// varying are what differs between two runs of a playbook in the files
// they write: times and dates (in text and in file names), durations and
// UUIDs.
var varying = []*regexp.Regexp{
	regexp.MustCompile(`\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?`),
	regexp.MustCompile(`\d{4}-\d{2}-\d{2}-\d{6}`),
	regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`),
	regexp.MustCompile(`"(total_duration_minutes|duration_minutes|duration_s|run_seconds|elapsed_s|total_duration_s|verification_duration_seconds|total_time_seconds)": [0-9.e+-]+`),
}

func unvarying(s string) string {
	for _, re := range varying {
		s = re.ReplaceAllStringFunc(s, func(m string) string {
			if i := strings.Index(m, ": "); i > 0 && strings.HasPrefix(m, `"`) {
				return m[:i] + ": (varies)"
			}
			return "(varies)"
		})
	}
	return s
}

// sameFiles compares the files under sub of two project directories,
// their names and contents modulo times and ids (unvarying). A backup
// (NAME.bak, NAME.backup) must be in both, but its content is the
// version before the last write, which depends on time: a document that
// holds a timestamp is written again when the clock moved on between two
// checkpoints, and not when they fell in the same second.
func sameFiles(t *testing.T, local, worker, sub string) {
	t.Helper()
	read := func(root string) map[string]string {
		files := map[string]string{}
		base := filepath.Join(root, sub)
		err := filepath.WalkDir(base, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			files[unvarying(rel)] = unvarying(string(b))
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", base, err)
		}
		return files
	}
	l, w := read(local), read(worker)
	if len(l) == 0 {
		t.Errorf("the local run wrote nothing under %s", sub)
	}
	for name, lc := range l {
		wc, ok := w[name]
		switch {
		case !ok:
			t.Errorf("%s: written locally, not on the worker", name)
		case strings.HasSuffix(name, ".bak") || strings.HasSuffix(name, ".backup"):
		case lc != wc:
			ll, wl := strings.Split(lc, "\n"), strings.Split(wc, "\n")
			for i := 0; i < max(len(ll), len(wl)); i++ {
				if i >= len(ll) || i >= len(wl) || ll[i] != wl[i] {
					t.Errorf("%s differs from line %d:\nlocal  %s\nworker %s", name, i+1,
						strings.Join(ll[i:min(i+5, len(ll))], "\n"), strings.Join(wl[i:min(i+5, len(wl))], "\n"))
					break
				}
			}
		}
	}
	for name := range w {
		if _, ok := l[name]; !ok {
			t.Errorf("%s: written on the worker, not locally", name)
		}
	}
}
