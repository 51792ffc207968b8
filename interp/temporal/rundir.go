package temporal

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"
)

// A run on Temporal keeps a run directory as a local run does (its state,
// its event log, its artifacts), in a temporary directory of the worker
// that walks it, not in the history. QueryRunDir hands it to a client,
// which reads it as a local run's (apl show, apl logs). A run that ended
// keeps it in memory from its last step until the worker lets the
// workflow go; a worker asked about it later replays the run, which
// writes it again.

// QueryRunDir returns the run's directory (RunDir); its argument says
// whether the artifacts' contents come too, or their names alone.
const QueryRunDir = "apl.rundir"

// runDirMax bounds what QueryRunDir returns: the contents of the
// artifacts past it are left out.
const runDirMax = 3 << 20

// RunDir is a run's directory: its files by path, slash-separated,
// relative to it. Cut names the artifacts whose contents were left out
// (over runDirMax in all).
type RunDir struct {
	Files map[string][]byte
	Cut   []string `json:",omitempty"`
}

// runDir is the run directory of a workflow, for QueryRunDir: dir while
// the run goes on, kept once it ended (keep).
type runDir struct {
	dir  string
	kept *RunDir
}

// keep reads the directory into memory before the workflow removes it.
func (d *runDir) keep() {
	if rd, err := readRunDir(d.dir, true); err == nil {
		d.kept = &rd
	}
}

func (d *runDir) query(contents bool) (RunDir, error) {
	if d.kept == nil {
		return readRunDir(d.dir, contents)
	}
	out := RunDir{Files: map[string][]byte{}, Cut: d.kept.Cut}
	size := 0
	for name, b := range d.kept.Files {
		if isArtifact(name) && (!contents || size+len(b) > runDirMax) {
			if contents {
				out.Cut = append(out.Cut, name)
			}
			b = nil
		}
		size += len(b)
		out.Files[name] = b
	}
	return out, nil
}

func isArtifact(name string) bool { return strings.HasPrefix(name, "artifacts/") }

// readRunDir reads dir's files; an artifact's contents only when
// contents is set, and while the total stays under runDirMax.
func readRunDir(dir string, contents bool) (RunDir, error) {
	out := RunDir{Files: map[string][]byte{}}
	size := 0
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		var b []byte
		if !isArtifact(rel) || contents {
			if b, err = os.ReadFile(p); err != nil {
				return err
			}
			if isArtifact(rel) && size+len(b) > runDirMax {
				out.Cut = append(out.Cut, rel)
				b = nil
			}
			size += len(b)
		}
		out.Files[rel] = b
		return nil
	})
	return out, err
}

// setRunDirQuery answers QueryRunDir.
func setRunDirQuery(ctx workflow.Context, d *runDir) error {
	return workflow.SetQueryHandler(ctx, QueryRunDir, d.query)
}

// FetchRunDir writes run id's directory, as its workflow keeps it, into
// dir (artifacts' contents too when contents is set; else they are
// empty): apl show and apl logs read it there as a local run's. A worker
// must answer: the one walking the run, or any, to replay one that ended.
func FetchRunDir(ctx context.Context, c client.Client, id, dir string, contents bool) (cut []string, err error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	v, err := c.QueryWorkflow(ctx, id, "", QueryRunDir, contents)
	if err != nil {
		return nil, fmt.Errorf("run %s on Temporal: its run directory: %w", id, err)
	}
	var rd RunDir
	if err := v.Get(&rd); err != nil {
		return nil, fmt.Errorf("run %s on Temporal: its run directory: %w", id, err)
	}
	for name, b := range rd.Files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if !strings.HasPrefix(p, filepath.Clean(dir)+string(filepath.Separator)) {
			return nil, fmt.Errorf("run %s on Temporal: its run directory names %q, outside it", id, name)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return nil, err
		}
	}
	return rd.Cut, nil
}
