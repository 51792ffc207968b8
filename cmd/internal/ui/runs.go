package ui

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/apl-lang/apl/interp"
)

// Runs is where the ui finds runs. Local reads a project's run
// directories; a source for another engine's runs (Temporal's) can be
// added beside it.
type Runs interface {
	// List returns every run, newest first.
	List() ([]Summary, error)
	// Open reads one run by id: its state with its whole event log, and
	// the directory its files are in.
	Open(id string) (*Run, error)
	// Stamp is a value that changes whenever the run's recorded state
	// does, cheap to compute: the live view polls it.
	Stamp(id string) (string, error)
}

// Summary is one run in the runs list.
type Summary struct {
	ID        string
	Playbook  string
	Ref       string
	Status    string
	Reason    string
	StartedAt time.Time
	DurationS float64
	Tokens    int
	CostUSD   *float64
	Waiting   *interp.Waiting
}

// Run is one run read in full.
type Run struct {
	Summary
	State *interp.State
	// Dir is the run's directory: the only place its files are served
	// from.
	Dir string
}

// ErrNoRun is returned by Open for an id that names no run.
var ErrNoRun = errors.New("no such run")

// Local is the runs of a runs directory (a project's .apl/runs).
type Local struct {
	Dir string
}

// List reads every run of the directory, as apl runs does.
func (l Local) List() ([]Summary, error) {
	entries, err := os.ReadDir(l.Dir)
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	var out []Summary
	for _, ent := range entries {
		if !ent.IsDir() || !validID(ent.Name()) {
			continue
		}
		dir := filepath.Join(l.Dir, ent.Name())
		st, _, err := interp.ReadRun(dir)
		if err != nil {
			continue // not a run, or one being created
		}
		out = append(out, summarize(dir, st))
	}
	slices.SortStableFunc(out, func(a, b Summary) int {
		return cmp.Or(b.StartedAt.Compare(a.StartedAt), strings.Compare(b.ID, a.ID))
	})
	return out, nil
}

// Open reads run id. The id is a run directory's name, never a path: the
// ui reads only runs of its own directory.
func (l Local) Open(id string) (*Run, error) {
	dir, err := l.dir(id)
	if err != nil {
		return nil, err
	}
	st, _, err := interp.ReadRun(dir)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", id, err)
	}
	if st.Events, err = interp.ReadEvents(dir, st); err != nil {
		return nil, fmt.Errorf("run %s: %w", id, err)
	}
	return &Run{Summary: summarize(dir, st), State: st, Dir: dir}, nil
}

// Stamp is the sizes and times of the files a run's state is written to.
func (l Local) Stamp(id string) (string, error) {
	dir, err := l.dir(id)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, name := range []string{"state.json", "state.journal", "output.json"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil {
			fmt.Fprintf(&b, "%s:%d:%d;", name, fi.Size(), fi.ModTime().UnixNano())
		}
	}
	fmt.Fprintf(&b, "held:%v", interp.RunHeld(dir))
	return b.String(), nil
}

func (l Local) dir(id string) (string, error) {
	if !validID(id) {
		return "", ErrNoRun
	}
	dir, err := interp.ResolveRun(l.Dir, id)
	if err != nil {
		return "", ErrNoRun
	}
	// ResolveRun follows latest and takes directories; the ui takes only
	// a run directory directly inside its own.
	if filepath.Clean(filepath.Dir(dir)) != filepath.Clean(l.Dir) {
		return "", ErrNoRun
	}
	// Nor a symlink planted among them: its files would be another
	// directory's.
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return "", ErrNoRun
	}
	return dir, nil
}

// validID says whether id can be a run directory's name: not empty, no
// separator, not . or .., not the latest link.
func validID(id string) bool {
	return id != "" && id != "." && id != ".." && id != "latest" && !strings.ContainsAny(id, `/\`) && !strings.ContainsRune(id, 0)
}

// statusKilled is the reason of a run that says running but whose
// process is gone, as apl runs says it.
const statusKilled = "its process ended without recording how the run ended (killed, or the machine went down)"

func summarize(dir string, st *interp.State) Summary {
	m := st.Meta
	if m.Status == interp.StatusRunning && !interp.RunHeld(dir) {
		m.Status, m.Reason = interp.StatusInterrupted, statusKilled
	}
	return Summary{ID: m.RunID, Playbook: m.Playbook, Ref: m.PlaybookRef, Status: m.Status, Reason: m.Reason,
		StartedAt: m.StartedAt, DurationS: st.Metrics.DurationS, Tokens: st.Metrics.TotalTokens,
		CostUSD: st.Metrics.TotalCostUSD, Waiting: st.Waiting}
}
